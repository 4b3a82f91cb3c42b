//===- CodeObject.cpp - AMDHSA code objects: ELF, descriptors, metadata ---===//
//
// The text section and the kernel symbols come from the ELF (LLVM's object
// library); each kernel's 64-byte descriptor `<name>.kd` gives its segment
// sizes, entry offset and the register-setup bits (AMDGPUUsage, "Kernel
// Descriptor"); its arguments, wavefront size and register counts come from
// the AMDHSA metadata note, read through ROCm's comgr
// (amd_comgr_get_data_metadata). Debian's comgr 5.2 predates gfx950's ISA
// name, but its metadata reader does not depend on it (its ISA-name query
// fails on these objects and is not used).
//
//===----------------------------------------------------------------------===//
#include "Machine.h"

#include "llvm/Object/ELFObjectFile.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <amd_comgr.h>

#include <cstring>

using namespace llvm;
using namespace mla::emu;

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

namespace {
/// Small RAII helpers over comgr's C API.
struct Node {
  amd_comgr_metadata_node_t n{};
  bool valid = false;
  ~Node() {
    if (valid)
      amd_comgr_destroy_metadata(n);
  }
};

std::string str(amd_comgr_metadata_node_t n) {
  size_t size = 0;
  if (amd_comgr_get_metadata_string(n, &size, nullptr) || !size)
    return "";
  std::string s(size, '\0');
  amd_comgr_get_metadata_string(n, &size, s.data());
  if (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

bool lookup(amd_comgr_metadata_node_t map, const char *key, Node &out) {
  if (amd_comgr_metadata_lookup(map, key, &out.n))
    return false;
  out.valid = true;
  return true;
}

std::string lookupString(amd_comgr_metadata_node_t map, const char *key) {
  Node n;
  return lookup(map, key, n) ? str(n.n) : "";
}

uint64_t lookupInt(amd_comgr_metadata_node_t map, const char *key) {
  std::string s = lookupString(map, key);
  return s.empty() ? 0 : std::strtoull(s.c_str(), nullptr, 0);
}

/// Calls `f` with each element of the metadata list `list`.
template <typename F> void forEachElement(amd_comgr_metadata_node_t list, F f) {
  size_t count = 0;
  amd_comgr_get_metadata_list_size(list, &count);
  for (size_t i = 0; i < count; ++i) {
    Node element;
    if (amd_comgr_index_list_metadata(list, i, &element.n))
      continue;
    element.valid = true;
    f(element.n);
  }
}

/// Reads amdhsa.kernels into `kernels` (by name).
Error readMetadata(ArrayRef<uint8_t> elf,
                   std::map<std::string, Kernel> &kernels) {
  amd_comgr_data_t data;
  if (amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data))
    return err("comgr: cannot create a data object");
  llvm::scope_exit release([&] { amd_comgr_release_data(data); });
  if (amd_comgr_set_data(data, elf.size(),
                         reinterpret_cast<const char *>(elf.data())))
    return err("comgr: cannot take the code object");
  Node md;
  if (amd_comgr_get_data_metadata(data, &md.n))
    return err("comgr: the code object has no readable AMDHSA metadata");
  md.valid = true;
  Node list;
  if (!lookup(md.n, "amdhsa.kernels", list))
    return err("the AMDHSA metadata has no amdhsa.kernels");
  forEachElement(list.n, [&](amd_comgr_metadata_node_t k) {
    Kernel kernel;
    kernel.name = lookupString(k, ".name");
    kernel.wavefrontSize = lookupInt(k, ".wavefront_size");
    kernel.sgprCount = lookupInt(k, ".sgpr_count");
    kernel.vgprCount = lookupInt(k, ".vgpr_count");
    kernel.agprCount = lookupInt(k, ".agpr_count");
    Node args;
    if (lookup(k, ".args", args))
      forEachElement(args.n, [&](amd_comgr_metadata_node_t arg) {
        KernelArg ka;
        ka.name = lookupString(arg, ".name");
        ka.valueKind = lookupString(arg, ".value_kind");
        ka.offset = lookupInt(arg, ".offset");
        ka.size = lookupInt(arg, ".size");
        kernel.args.push_back(std::move(ka));
      });
    kernels[kernel.name] = std::move(kernel);
  });
  return Error::success();
}
} // namespace

Expected<std::unique_ptr<CodeObject>>
CodeObject::load(ArrayRef<uint8_t> bytes) {
  auto obj = object::ObjectFile::createObjectFile(MemoryBufferRef(
      StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
      "code object"));
  if (!obj)
    return err("not an ELF code object: " + toString(obj.takeError()));
  auto *elf = dyn_cast<object::ELF64LEObjectFile>(obj->get());
  if (!elf || elf->getArch() != Triple::amdgcn)
    return err("not an AMDGPU (amdgcn) ELF code object");
  std::unique_ptr<CodeObject> co(new CodeObject);
  // e_flags: EF_AMDGPU_MACH (bits 7:0).
  unsigned mach = elf->getPlatformFlags() & 0xff;
  switch (mach) {
  case 0x4c:
    co->chip_ = "gfx942";
    break;
  case 0x4f:
    co->chip_ = "gfx950";
    break;
  default:
    return err("code object is for EF_AMDGPU_MACH 0x" + Twine::utohexstr(mach) +
               "; the emulator runs gfx942 and gfx950");
  }

  std::map<std::string, Kernel> meta;
  if (Error e = readMetadata(bytes, meta))
    return std::move(e);

  // Text section (one, in the objects LLVM links) and the data the .kd
  // symbols point into (.rodata).
  std::map<std::string, object::SectionRef> sections;
  for (const object::SectionRef &s : elf->sections()) {
    Expected<StringRef> name = s.getName();
    if (name)
      sections[name->str()] = s;
    if (s.isText()) {
      StringRef data = cantFail(s.getContents());
      co->text_.assign(data.begin(), data.end());
      co->textAddress_ = s.getAddress();
      co->textFileOffset_ =
          data.data() - reinterpret_cast<const char *>(bytes.data());
    }
  }
  if (co->text_.empty())
    return err("code object has no text section");

  for (const object::SymbolRef &sym : elf->symbols()) {
    Expected<StringRef> name = sym.getName();
    if (!name || !name->ends_with(".kd"))
      continue;
    Expected<object::section_iterator> sec = sym.getSection();
    Expected<uint64_t> addr = sym.getAddress();
    if (!sec || !addr || *sec == elf->section_end())
      continue;
    StringRef data = cantFail((*sec)->getContents());
    uint64_t off = *addr - (*sec)->getAddress();
    if (off + 64 > data.size())
      return err("kernel descriptor " + *name + " lies outside its section");
    const uint8_t *kd = reinterpret_cast<const uint8_t *>(data.data()) + off;
    auto rd32 = [&](unsigned at) {
      uint32_t v;
      std::memcpy(&v, kd + at, 4);
      return v;
    };
    Kernel k;
    std::string kname = name->drop_back(3).str();
    auto m = meta.find(kname);
    if (m != meta.end())
      k = m->second;
    k.name = kname;
    k.groupSegmentBytes = rd32(0);
    k.privateSegmentBytes = rd32(4);
    k.kernargBytes = rd32(8);
    int64_t entryOffset;
    std::memcpy(&entryOffset, kd + 16, 8);
    k.entry = *addr + entryOffset;
    k.rsrc3 = rd32(44);
    k.rsrc1 = rd32(48);
    k.rsrc2 = rd32(52);
    std::memcpy(&k.codeProperties, kd + 56, 2);
    if (m == meta.end())
      return err("kernel " + kname +
                 " has a descriptor but no AMDHSA metadata");
    co->kernels_.push_back(std::move(k));
  }
  if (co->kernels_.empty())
    return err("code object has no kernel descriptors (*.kd symbols)");
  auto dec = Decoder::create(co->chip_);
  if (!dec)
    return dec.takeError();
  co->decoder_ = std::move(*dec);
  return co;
}

CodeObject::~CodeObject() = default;

const Kernel *CodeObject::kernel(StringRef name) const {
  for (const Kernel &k : kernels_)
    if (k.name == name)
      return &k;
  return nullptr;
}

const uint8_t *CodeObject::code(uint64_t address, uint64_t *available) const {
  if (address < textAddress_ || address >= textAddress_ + text_.size())
    return nullptr;
  *available = textAddress_ + text_.size() - address;
  return text_.data() + (address - textAddress_);
}

Expected<std::unique_ptr<CodeObject>>
CodeObject::fromCode(const std::string &chip, ArrayRef<uint8_t> code) {
  std::unique_ptr<CodeObject> co(new CodeObject);
  co->chip_ = chip;
  co->text_.assign(code.begin(), code.end());
  co->textAddress_ = 0;
  Kernel k;
  k.name = "raw";
  co->kernels_.push_back(k);
  auto dec = Decoder::create(chip);
  if (!dec)
    return dec.takeError();
  co->decoder_ = std::move(*dec);
  return co;
}

Expected<std::vector<std::pair<uint64_t, std::string>>>
CodeObject::disassemble(uint64_t from, uint64_t to) const {
  std::vector<std::pair<uint64_t, std::string>> out;
  for (uint64_t pc = from; pc < to;) {
    uint64_t avail = 0;
    const uint8_t *p = code(pc, &avail);
    if (!p)
      break;
    auto in = decoder_->decode(
        ArrayRef<uint8_t>(p, std::min<uint64_t>(avail, 16)), pc);
    if (!in) {
      // Not every word is code (padding): report it and step on.
      consumeError(in.takeError());
      out.emplace_back(pc, "<no instruction>");
      pc += 4;
      continue;
    }
    out.emplace_back(pc, (*in)->text);
    pc += (*in)->size;
  }
  return out;
}
