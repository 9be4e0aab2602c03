// Hot loops built twice on x86-64 with GCC: once for CPUs with AVX2 and FMA (x86-64-v3), where
// they vectorize wide and fma is one instruction, and once for any CPU; the loader picks one.
// Only code inlined into the marked function uses the wider instructions.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KSMITH_WITH_AVX2_CLONE __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KSMITH_WITH_AVX2_CLONE
#endif
