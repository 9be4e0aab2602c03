// The ptxas and cuobjdump parsers against real tool output.
//
// The ptxas samples are verbatim `nvcc 13.0 -Xptxas -v` output for small kernels (an
// elementwise add, a 256-float shared tile, a 64-value array under -maxrregcount=32 that spills,
// a non-inlined device function with a stack array, a templated kernel in a namespace).
// The machine these were made on has no cuobjdump (nvcc's pip wheels leave it out), so the SASS
// samples are written in the layout cuobjdump 13 prints, encodings and predicates included; the
// NvccCompiler tests read a real cuobjdump's output wherever one is installed.
#include "backends/cuda/cuda_resources.h"

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// nvcc -std=c++17 -O3 -shared ... -gencode=arch=compute_90a,code=sm_90a -Xptxas -v
constexpr const char* kPtxasSm90a = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z11smem_kernelILi256EEvPKfPfi' for 'sm_90a'
ptxas info    : Function properties for _Z11smem_kernelILi256EEvPKfPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 9.534 ms
ptxas info    : Compiling entry function '_Z10add_kernelPKfS0_Pfl' for 'sm_90a'
ptxas info    : Function properties for _Z10add_kernelPKfS0_Pfl
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
ptxas info    : Compile time = 2.489 ms
)";

// The same toolchain with -maxrregcount=32: spills, a stack, a device function.
constexpr const char* kPtxasSpills = R"(ptxas info    : Overriding maximum register limit 256 for '_ZN2ns9templatedIdEEvPT_' with  32 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z15dyn_smem_kernelPfi' with  32 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z12spill_kernelPKfPfi' with  32 of maxrregcount option
ptxas info    : 512 bytes gmem
ptxas info    : Compiling entry function '_ZN2ns9templatedIdEEvPT_' for 'sm_90a'
ptxas info    : Function properties for _ZN2ns9templatedIdEEvPT_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 2.036 ms
ptxas info    : Compiling entry function '_Z15dyn_smem_kernelPfi' for 'sm_90a'
ptxas info    : Function properties for _Z15dyn_smem_kernelPfi
    128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 128 bytes cumulative stack size
ptxas info    : Compile time = 3.886 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z12spill_kernelPKfPfi' for 'sm_90a'
ptxas info    : Function properties for _Z12spill_kernelPKfPfi
    416 bytes stack frame, 720 bytes spill stores, 764 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 416 bytes cumulative stack size
ptxas info    : Compile time = 14.798 ms
)";

// For sm_80 ptxas also lists constant banks (nvcc 13 stopped doing so for sm_90 and later).
constexpr const char* kPtxasSm80 = R"(ptxas info    : 512 bytes gmem, 256 bytes cmem[3], 8 bytes cmem[4]
ptxas info    : Compiling entry function '_ZN2ns9templatedIdEEvPT_' for 'sm_80'
ptxas info    : Function properties for _ZN2ns9templatedIdEEvPT_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
ptxas info    : Compile time = 1.949 ms
ptxas info    : Compiling entry function '_Z12spill_kernelPKfPfi' for 'sm_80'
ptxas info    : Function properties for _Z12spill_kernelPKfPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 72 registers, used 0 barriers, 372 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : Compile time = 7.633 ms
)";

const KernelResources* Find(const std::vector<KernelResources>& kernels, const std::string& mangled) {
  for (const auto& kernel : kernels) {
    if (kernel.mangled_name == mangled) return &kernel;
  }
  return nullptr;
}

TEST(ParsePtxasInfo, ReadsRegistersBarriersAndSharedMemoryPerKernel) {
  const auto kernels = ParsePtxasInfo(kPtxasSm90a);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].mangled_name, "_Z11smem_kernelILi256EEvPKfPfi");
  EXPECT_EQ(kernels[0].name, "void smem_kernel<256>(float const*, float*, int)");
  EXPECT_EQ(kernels[0].arch, "sm_90a");
  EXPECT_TRUE(kernels[0].is_kernel);
  EXPECT_EQ(kernels[0].registers, 14);
  EXPECT_EQ(kernels[0].barriers, 1);
  EXPECT_EQ(kernels[0].shared_memory_bytes, 1024);
  EXPECT_EQ(kernels[0].spill_store_bytes, 0);
  EXPECT_EQ(kernels[1].name, "add_kernel(float const*, float const*, float*, long)");
  EXPECT_EQ(kernels[1].registers, 12);
  EXPECT_EQ(kernels[1].shared_memory_bytes, 0);
  EXPECT_EQ(kernels[1].constant_memory_bytes, 0);
}

TEST(ParsePtxasInfo, ReadsSpillsAndStackFramesUnderARegisterCap) {
  const auto kernels = ParsePtxasInfo(kPtxasSpills);
  const KernelResources* spill = Find(kernels, "_Z12spill_kernelPKfPfi");
  ASSERT_NE(spill, nullptr);
  EXPECT_EQ(spill->registers, 32);
  EXPECT_EQ(spill->stack_frame_bytes, 416);
  EXPECT_EQ(spill->spill_store_bytes, 720);
  EXPECT_EQ(spill->spill_load_bytes, 764);
  EXPECT_EQ(spill->cumulative_stack_bytes, 416);
  const KernelResources* dynamic = Find(kernels, "_Z15dyn_smem_kernelPfi");
  ASSERT_NE(dynamic, nullptr);
  EXPECT_EQ(dynamic->stack_frame_bytes, 128);
  EXPECT_EQ(dynamic->barriers, 1);
  // extern __shared__ is sized at launch: ptxas reports none.
  EXPECT_EQ(dynamic->shared_memory_bytes, 0);
  const KernelResources* templated = Find(kernels, "_ZN2ns9templatedIdEEvPT_");
  ASSERT_NE(templated, nullptr);
  EXPECT_EQ(templated->name, "void ns::templated<double>(double*)");
  EXPECT_EQ(templated->registers, 8);
}

TEST(ParsePtxasInfo, DeviceFunctionsAppearOnlyWhenTheyHaveAStackOrSpills) {
  // helper() has "Function properties" but no stack and no spills: nothing worth showing.
  const auto kernels = ParsePtxasInfo(kPtxasSpills);
  EXPECT_EQ(kernels.size(), 3u);
  EXPECT_EQ(Find(kernels, "_Z6helperPfi"), nullptr);
  const std::string with_stack = R"(ptxas info    : Function properties for _Z6helperPfi
    64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
)";
  const auto functions = ParsePtxasInfo(std::string(kPtxasSpills) + with_stack);
  const KernelResources* helper = Find(functions, "_Z6helperPfi");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_kernel);
  EXPECT_EQ(helper->arch, "sm_90a");
  EXPECT_EQ(helper->stack_frame_bytes, 64);
  EXPECT_EQ(helper->spill_store_bytes, 8);
}

TEST(ParsePtxasInfo, SumsTheConstantBanksPtxasListsForOlderArchitectures) {
  const auto kernels = ParsePtxasInfo(kPtxasSm80);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].arch, "sm_80");
  EXPECT_EQ(kernels[0].constant_memory_bytes, 360);
  EXPECT_EQ(kernels[1].constant_memory_bytes, 380);
  EXPECT_EQ(kernels[1].registers, 72);
}

TEST(ParsePtxasInfo, ALogWithoutPtxasLinesGivesNothing) {
  EXPECT_TRUE(ParsePtxasInfo("").empty());
  EXPECT_TRUE(ParsePtxasInfo("ksmith-expected-signature(1): error: more than one instance of "
                             "overloaded function \"vector_add\" has \"C\" linkage\n")
                  .empty());
  // A "Used" line with no function before it is ignored rather than attributed to nothing.
  EXPECT_TRUE(ParsePtxasInfo("ptxas info    : Used 12 registers, used 0 barriers\n").empty());
}

TEST(ParsePtxasInfo, SerializesEveryField) {
  const auto json = ToJson(ParsePtxasInfo(kPtxasSpills));
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 3u);
  const auto& spill = json[2];
  EXPECT_EQ(spill["mangled_name"], "_Z12spill_kernelPKfPfi");
  EXPECT_EQ(spill["registers"], 32);
  EXPECT_EQ(spill["spill_store_bytes"], 720);
  EXPECT_EQ(spill["spill_load_bytes"], 764);
  EXPECT_EQ(spill["stack_frame_bytes"], 416);
  for (const char* key : {"name", "arch", "is_kernel", "barriers", "shared_memory_bytes",
                          "constant_memory_bytes", "cumulative_stack_bytes"}) {
    EXPECT_TRUE(spill.contains(key)) << key;
  }
}

// cuobjdump -sass of a shared object with two kernels: a float4 elementwise kernel and a Hopper
// wgmma tile with TMA loads, register spills and the HFMA2.MMA zeroing idiom.
constexpr const char* kSass = R"sass(
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

	code for sm_90a
	.target	sm_90a
		Function : _Z10add_float4PK6float4S1_PS_l
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                      /* 0x00000a00ff017b82 */
                                                                               /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                          /* 0x0000000000007919 */
                                                                               /* 0x000e280000002100 */
        /*0020*/              @!P0 EXIT ;                                      /* 0x000000000000894d */
                                                                               /* 0x000fea0003800000 */
        /*0030*/                   LDG.E.128 R4, desc[UR4][R2.64] ;            /* 0x0000000402047981 */
                                                                               /* 0x000ea8000c1e1d00 */
        /*0040*/                   LDG.E.128.CONSTANT R8, desc[UR4][R6.64] ;   /* 0x0000000406087981 */
                                                                               /* 0x000ea8000c1e9d00 */
        /*0050*/                   FADD R4, R4, R8 ;                           /* 0x0000000804047221 */
                                                                               /* 0x004fe20000000000 */
        /*0060*/                   FFMA R5, R5, 1, R9 ;                        /* 0x3f80000005057823 */
                                                                               /* 0x000fe20000000009 */
        /*0070*/                   STG.E.128 desc[UR4][R12.64], R4 ;           /* 0x000000040c007986 */
                                                                               /* 0x000fe2000c101d04 */
        /*0080*/                   EXIT ;                                      /* 0x000000000000794d */
                                                                               /* 0x000fea0003800000 */
        /*0090*/                   BRA 0x90;                                   /* 0xfffffffc00fc7947 */
                                                                               /* 0x000fc0000383ffff */
        /*00a0*/                   NOP;                                        /* 0x0000000000007918 */
                                                                               /* 0x000fc00000000000 */
		..........


		Function : wgmma_tile
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                      /* 0x00000a00ff017b82 */
                                                                               /* 0x000fe20000000800 */
        /*0010*/                   HFMA2.MMA R6, -RZ, RZ, 0, 0 ;               /* 0x000000ffff067435 */
                                                                               /* 0x000fe200000001ff */
        /*0020*/                   UTMALDG.2D [UR8], [UR4], desc[UR6] ;        /* 0x0000000608007db4 */
                                                                               /* 0x0003e20008011000 */
        /*0030*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR5], R0 ; /* 0x00000000ff0075a7 */
                                                                               /* 0x000e64000800017f */
        /*0040*/                   WARPGROUP.ARRIVE ;                          /* 0x00000000000079cd */
                                                                               /* 0x000fe20000000000 */
        /*0050*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, gsb0 ; /* 0x05e00000081879f0 */
                                                                               /* 0x000fe60008001818 */
        /*0060*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24, gsb0 ; /* 0x05e000000c1879f0 */
                                                                               /* 0x000fe60008001818 */
        /*0070*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;             /* 0x00000000000079af */
                                                                               /* 0x000fe20000000000 */
        /*0080*/                   HMMA.16816.F32.BF16 R8, R12, R16, R8 ;      /* 0x000000100c08723c */
                                                                               /* 0x000fe20000041808 */
        /*0090*/                   LDS.64 R2, [R0+UR4] ;                       /* 0x0000000400027984 */
                                                                               /* 0x000e220008000a00 */
        /*00a0*/                   LDS R3, [R0] ;                              /* 0x0000000000037984 */
                                                                               /* 0x000e220000000800 */
        /*00b0*/                   STL.64 [R1+0x50], R6 ;                      /* 0x0000500601007387 */
                                                                               /* 0x000fe20000100a00 */
        /*00c0*/                   LDL R7, [R1+0x50] ;                         /* 0x0000500001077983 */
                                                                               /* 0x000ea20000100800 */
        /*00d0*/               @P0 DFMA R10, R10, R12, R14 ;                   /* 0x0000000c0a0a022b */
                                                                               /* 0x000fe2000000000e */
        /*00e0*/                   HFMA2 R4, R4, R5, R6 ;                      /* 0x0000000504047231 */
                                                                               /* 0x000fe20000000006 */
        /*00f0*/                   UTMASTG.2D [UR4], [UR8] ;                   /* 0x00000004080073b5 */
                                                                               /* 0x000fe20008000000 */
        /*0100*/                   EXIT ;                                      /* 0x000000000000794d */
                                                                               /* 0x000fea0003800000 */
        /*0110*/                   BRA 0x110;                                  /* 0xfffffffc00fc7947 */
                                                                               /* 0x000fc0000383ffff */
		..........



Fatbin ptx code:
================
arch = sm_90a
code version = [8,8]
host = linux
compile_size = 64bit
compressed
)sass";

const KernelSass* FindKernel(const SassSummary& summary, const std::string& mangled) {
  for (const auto& kernel : summary.kernels) {
    if (kernel.mangled_name == mangled) return &kernel;
  }
  return nullptr;
}

TEST(SummarizeSass, SplitsTheListingIntoKernelsWithTheirArch) {
  const SassSummary summary = SummarizeSass(kSass);
  EXPECT_TRUE(summary.error.empty());
  ASSERT_EQ(summary.kernels.size(), 2u);
  EXPECT_EQ(summary.kernels[0].mangled_name, "_Z10add_float4PK6float4S1_PS_l");
  EXPECT_EQ(summary.kernels[0].name, "add_float4(float4 const*, float4 const*, float4*, long)");
  EXPECT_EQ(summary.kernels[0].arch, "sm_90a");
  EXPECT_EQ(summary.kernels[1].name, "wgmma_tile");
}

TEST(SummarizeSass, CountsInstructionsButNotPaddingOrEncodingLines) {
  const SassSummary summary = SummarizeSass(kSass);
  const KernelSass* add = FindKernel(summary, "_Z10add_float4PK6float4S1_PS_l");
  ASSERT_NE(add, nullptr);
  // LDC S2R EXIT LDG LDG FADD FFMA STG EXIT BRA; the NOP is padding.
  EXPECT_EQ(add->counts.instructions, 10);
  EXPECT_EQ(add->counts.loads, 2);
  EXPECT_EQ(add->counts.wide_loads, 2);
  EXPECT_EQ(add->counts.loads_128_bit, 2);
  EXPECT_EQ(add->counts.fma, 1);
  EXPECT_EQ(add->counts.tensor_core, 0);
}

TEST(SummarizeSass, FindsTensorCoresTmaWarpgroupFencesAndLocalMemory) {
  const SassSummary summary = SummarizeSass(kSass);
  const KernelSass* tile = FindKernel(summary, "wgmma_tile");
  ASSERT_NE(tile, nullptr);
  const SassCounts& counts = tile->counts;
  EXPECT_EQ(counts.tensor_core, 3);
  EXPECT_EQ(counts.tensor_opcodes.at("HGMMA.64x128x16.F32.BF16"), 2);
  EXPECT_EQ(counts.tensor_opcodes.at("HMMA.16816.F32.BF16"), 1);
  EXPECT_EQ(counts.warpgroup, 2);
  EXPECT_EQ(counts.tma, 2);
  // DFMA (predicated) and HFMA2 count; HFMA2.MMA R6, -RZ, RZ, 0, 0 only zeroes a register.
  EXPECT_EQ(counts.fma, 2);
  EXPECT_EQ(counts.loads, 2);
  EXPECT_EQ(counts.wide_loads, 1);
  EXPECT_EQ(counts.loads_128_bit, 0);
  EXPECT_EQ(counts.local_loads, 1);
  EXPECT_EQ(counts.local_stores, 1);
}

TEST(SummarizeSass, TotalsAddUpTheKernels) {
  const SassSummary summary = SummarizeSass(kSass);
  EXPECT_EQ(summary.total.instructions, summary.kernels[0].counts.instructions + summary.kernels[1].counts.instructions);
  EXPECT_EQ(summary.total.tensor_core, 3);
  EXPECT_EQ(summary.total.fma, 3);
  EXPECT_EQ(summary.total.loads_128_bit, 2);
  EXPECT_EQ(summary.total.tensor_opcodes.size(), 2u);
}

TEST(SummarizeSass, ReadsListingsWithoutEncodingsAndOlderDualIssueBraces) {
  const SassSummary summary = SummarizeSass(R"(	code for sm_80
		Function : k
        /*0000*/ LDG.E.64 R2, [R4.64] ;
        /*0010*/ { FFMA R0, R2, R3, R0 ;
        /*0020*/   LDL.128 R8, [R1] }
        /*0030*/ IMMA.16832.S8.S8 R8, R4.ROW, R8.COL, RZ ;
)");
  ASSERT_EQ(summary.kernels.size(), 1u);
  EXPECT_EQ(summary.kernels[0].arch, "sm_80");
  EXPECT_EQ(summary.total.instructions, 4);
  EXPECT_EQ(summary.total.wide_loads, 1);
  EXPECT_EQ(summary.total.fma, 1);
  EXPECT_EQ(summary.total.local_loads, 1);
  EXPECT_EQ(summary.total.tensor_opcodes.at("IMMA.16832.S8.S8"), 1);
}

TEST(SummarizeSass, EmptyOrForeignTextGivesNoKernels) {
  EXPECT_TRUE(SummarizeSass("").kernels.empty());
  EXPECT_TRUE(SummarizeSass("cuobjdump info    : File 'x.so' does not contain device code\n").kernels.empty());
  // Instructions before any Function header belong to nothing.
  EXPECT_EQ(SummarizeSass("        /*0000*/ FFMA R0, R1, R2, R3 ;\n").total.instructions, 0);
}

TEST(SummarizeSass, SerializesTotalsAndKernelsOrTheError) {
  const auto json = SummarizeSass(kSass).ToJson();
  EXPECT_EQ(json["total"]["tensor_core"], 3);
  EXPECT_EQ(json["total"]["tensor_opcodes"]["HGMMA.64x128x16.F32.BF16"], 2);
  ASSERT_EQ(json["kernels"].size(), 2u);
  EXPECT_EQ(json["kernels"][1]["counts"]["tma"], 2);
  EXPECT_EQ(json["kernels"][0]["arch"], "sm_90a");
  SassSummary missing;
  missing.error = "cuobjdump is not installed";
  EXPECT_EQ(missing.ToJson(), nlohmann::json({{"error", "cuobjdump is not installed"}}));
}

TEST(DemangleSymbol, DemanglesItaniumNamesAndKeepsOthers) {
  EXPECT_EQ(DemangleSymbol("_Z10add_kernelPKfS0_Pfl"), "add_kernel(float const*, float const*, float*, long)");
  EXPECT_EQ(DemangleSymbol("vector_add"), "vector_add");
  EXPECT_EQ(DemangleSymbol("_Znot_a_real_mangling"), "_Znot_a_real_mangling");
}

}  // namespace
}  // namespace ksmith

// Whole logs of this toolchain, kept as files (testdata/README.md says how each was made).
namespace ksmith {
namespace {

std::string Captured(const std::string& name) {
  std::ifstream file(std::string(KSMITH_SOURCE_DIR) + "/src/backends/cuda/testdata/" + name);
  EXPECT_TRUE(file.good()) << name;
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

TEST(ParsePtxasInfo, ReadsTheHonestMatmulAsNvcc13BuiltIt) {
  const auto kernels = ParsePtxasInfo(Captured("ptxas_nvcc13_matmul_fast_sm90a.log"));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].arch, "sm_90a");
  EXPECT_TRUE(kernels[0].is_kernel);
  EXPECT_NE(kernels[0].name.find("Sgemm"), std::string::npos) << kernels[0].name;
  EXPECT_EQ(kernels[0].registers, 126);
  EXPECT_EQ(kernels[0].barriers, 1);
  EXPECT_EQ(kernels[0].shared_memory_bytes, 8320);  // (8 x 132 + 8 x 128) floats
  EXPECT_EQ(kernels[0].stack_frame_bytes, 0);
  EXPECT_EQ(kernels[0].spill_store_bytes, 0);
}

TEST(ParsePtxasInfo, ReadsSpillsStacksAndConstantBanksFromTwoArchitecturesInOneLog) {
  const auto kernels = ParsePtxasInfo(Captured("ptxas_nvcc13_spill_sm90a_sm80.log"));
  // Two kernels per arch; the non-inlined Helper has no stack or spills, so it is not listed.
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(Find(kernels, "_Z6HelperPKfi"), nullptr);
  const KernelResources& spill = kernels[1];
  EXPECT_EQ(spill.mangled_name, "_Z5SpillPKfPfii");
  EXPECT_EQ(spill.arch, "sm_90a");
  EXPECT_EQ(spill.registers, 24);  // -maxrregcount=16 raised to sm_90a's lower bound
  EXPECT_EQ(spill.stack_frame_bytes, 960);
  EXPECT_EQ(spill.spill_store_bytes, 1104);
  EXPECT_EQ(spill.spill_load_bytes, 1112);
  EXPECT_EQ(spill.cumulative_stack_bytes, 960);
  EXPECT_EQ(spill.constant_memory_bytes, 0);  // nvcc 13 lists no banks for sm_90a
  EXPECT_EQ(kernels[0].cumulative_stack_bytes, 64);  // CallsHelper: Helper's stack array
  EXPECT_EQ(kernels[2].arch, "sm_80");
  EXPECT_EQ(kernels[2].registers, 32);
  EXPECT_EQ(kernels[2].constant_memory_bytes, 372);
  EXPECT_EQ(kernels[3].registers, 64);
  EXPECT_EQ(kernels[3].stack_frame_bytes, 192);
  EXPECT_EQ(kernels[3].spill_store_bytes, 0);
  EXPECT_EQ(kernels[3].constant_memory_bytes, 376);
}

}  // namespace
}  // namespace ksmith
