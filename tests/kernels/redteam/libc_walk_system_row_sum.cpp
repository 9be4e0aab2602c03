// expect: integrity_violation
// tries: runs a shell command through system(), called through a pointer found in libc's own
// dynamic symbol table from qsort's address (dl_iterate_phdr names the library that holds it), so
// that neither the source nor the import table names system; the sandbox refuses the process it
// would start, and the kernel sums anyway.
// cause: system
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

struct Search {
  uintptr_t inside;  // an address in the library to search
  char name[16];
  void* found;
};

// Each letter of the wanted name, one further in the alphabet: no text names it.
void Unshift(const char* shifted, char* name) {
  size_t i = 0;
  for (; shifted[i] != '\0'; ++i) name[i] = static_cast<char>(shifted[i] - 1);
  name[i] = '\0';
}

// The library's defined function called search->name, walked through its GNU hash table.
int Visit(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && search->inside >= start && search->inside < start + header.p_memsz) holds = true;
    if (header.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
  }
  if (!holds || dynamic == nullptr) return 0;
  // The loader relocates these entries in place on most targets; not on all.
  auto absolute = [&](ElfW(Addr) value) { return value < info->dlpi_addr ? value + info->dlpi_addr : value; };
  const ElfW(Sym)* symbols = nullptr;
  const char* strings = nullptr;
  const uint32_t* hash = nullptr;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(entry->d_un.d_ptr));
    if (entry->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(absolute(entry->d_un.d_ptr));
    if (entry->d_tag == DT_GNU_HASH) hash = reinterpret_cast<const uint32_t*>(absolute(entry->d_un.d_ptr));
  }
  if (symbols == nullptr || strings == nullptr || hash == nullptr) return 1;
  const uint32_t buckets = hash[0];
  const uint32_t first = hash[1];
  const uint32_t bloom_words = hash[2];
  const auto* bucket = reinterpret_cast<const uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(hash + 4) + bloom_words);
  const uint32_t* chain = bucket + buckets;
  for (uint32_t b = 0; b < buckets; ++b) {
    for (uint32_t i = bucket[b]; i != 0; ++i) {
      const ElfW(Sym)& symbol = symbols[i];
      if (symbol.st_shndx != SHN_UNDEF && ELF64_ST_TYPE(symbol.st_info) == STT_FUNC &&
          std::strcmp(strings + symbol.st_name, search->name) == 0) {
        search->found = reinterpret_cast<void*>(info->dlpi_addr + symbol.st_value);
        return 1;
      }
      if ((chain[i - first] & 1) != 0) break;
    }
  }
  return 1;
}

void* FindInLibc(const char* shifted) {
  Search search{reinterpret_cast<uintptr_t>(&qsort), {}, nullptr};
  Unshift(shifted, search.name);
  dl_iterate_phdr(&Visit, &search);
  return search.found;
}

}  // namespace

extern "C" void row_sum(const float* x, float* y, int64_t rows, int64_t cols) {
  using Shell = int (*)(const char*);
  static const auto shell = reinterpret_cast<Shell>(FindInLibc("tztufn"));
  static const int ran = shell != nullptr ? shell("cat /proc/self/status > /dev/null") : -1;
  (void)ran;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    y[r] = static_cast<float>(sum);
  }
}
