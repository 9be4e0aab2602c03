#include "binary/elf_symbols.h"

#include <elf.h>

#include <algorithm>
#include <cstring>

#include "core/files.h"

namespace ksmith {
namespace {

constexpr size_t kMaxSharedObjectBytes = size_t{512} << 20;

template <typename T>
bool ReadAt(const std::string& image, uint64_t offset, T* out) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(out, image.data() + offset, sizeof(T));
  return true;
}

std::string StringAt(const std::string& image, uint64_t table_offset, uint64_t table_size,
                     uint64_t index) {
  if (index >= table_size || table_offset + table_size > image.size()) return {};
  const char* start = image.data() + table_offset + index;
  return std::string(start, strnlen(start, table_size - index));
}

}  // namespace

Result<DynamicSymbols> ReadDynamicSymbols(const std::filesystem::path& shared_object) {
  auto image = ReadFile(shared_object, kMaxSharedObjectBytes);
  if (!image.ok()) return image.error();
  const std::string& bytes = *image;
  Elf64_Ehdr header;
  if (!ReadAt(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64) {
    return MakeError(ErrorKind::kParse, "{}: not a 64-bit ELF file", shared_object.string());
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!ReadAt(bytes, header.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) {
      return MakeError(ErrorKind::kParse, "{}: truncated section table", shared_object.string());
    }
  }
  DynamicSymbols symbols;
  for (const auto& section : sections) {
    if (section.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[section.sh_link];
    if (section.sh_type == SHT_SYMTAB || section.sh_type == SHT_DYNSYM) {
      const size_t count = section.sh_entsize ? section.sh_size / section.sh_entsize : 0;
      for (size_t i = 1; i < count; ++i) {
        Elf64_Sym symbol;
        if (!ReadAt(bytes, section.sh_offset + i * sizeof(Elf64_Sym), &symbol)) break;
        std::string name = StringAt(bytes, strings.sh_offset, strings.sh_size, symbol.st_name);
        if (name.empty()) continue;
        const int type = ELF64_ST_TYPE(symbol.st_info);
        if (symbol.st_shndx != SHN_UNDEF && type != STT_SECTION && type != STT_FILE) {
          symbols.defined.push_back(name);
        }
        if (section.sh_type == SHT_SYMTAB) continue;
        if (symbol.st_shndx == SHN_UNDEF) {
          symbols.imported.push_back(std::move(name));
        } else if (ELF64_ST_VISIBILITY(symbol.st_other) == STV_DEFAULT &&
                   ELF64_ST_BIND(symbol.st_info) != STB_LOCAL) {
          symbols.exported.push_back(std::move(name));
        }
      }
    } else if (section.sh_type == SHT_DYNAMIC) {
      const size_t count = section.sh_size / sizeof(Elf64_Dyn);
      for (size_t i = 0; i < count; ++i) {
        Elf64_Dyn entry;
        if (!ReadAt(bytes, section.sh_offset + i * sizeof(Elf64_Dyn), &entry)) break;
        if (entry.d_tag == DT_NEEDED) {
          symbols.needed.push_back(
              StringAt(bytes, strings.sh_offset, strings.sh_size, entry.d_un.d_val));
        }
      }
    }
  }
  std::sort(symbols.defined.begin(), symbols.defined.end());
  symbols.defined.erase(std::unique(symbols.defined.begin(), symbols.defined.end()), symbols.defined.end());
  return symbols;
}

}  // namespace ksmith
