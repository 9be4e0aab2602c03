// Keeps the ksmith_testing library non-empty before its first real source lands.
namespace ksmith::testing {
int kTestingLibraryPlaceholder = 0;
}
