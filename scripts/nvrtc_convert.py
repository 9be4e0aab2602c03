#!/usr/bin/env python3
"""Rewrites a CUDA kernel from the nvcc form (one .cu file, `kernel<<<...>>>` launches) into the
NVRTC form (docs/design.md, "The candidate contract"): device code in `#ifdef KSMITH_DEVICE`, host
code in `#ifdef KSMITH_HOST`, launches as `KSMITH_LAUNCH(grid, block, shared_bytes, stream,
kernel)(arguments...)`, and what both need (constants, plain structs, macros) outside both.

  scripts/nvrtc_convert.py IN.cu [OUT.cu]     (OUT defaults to standard output)

It reads the file's top-level declarations (and those of one anonymous namespace) and sorts them:
a function with __global__ or __device__, a struct with __device__ members, a __constant__ or
__device__ variable, `namespace x = cooperative_groups` and `using namespace nvcuda` go to the
device; a __host__ __device__ function to both; any other function (the extern "C" entry and host
helpers) to the host; the rest (constants, plain structs, macros) to both. It is a heuristic: check
the result with `ksmith build --backend cuda`. A launch whose template arguments are the host
function's own template parameters cannot be named to NVRTC and is left for a person to rewrite.
"""
import re
import sys

DEVICE_INCLUDES = ("cooperative_groups", "mma.h", "cuda/", "cub/", "cuda_pipeline", "cuda_awbarrier")
BOTH_INCLUDES = ("cstdint", "stdint.h", "cstddef", "stddef.h", "cfloat", "float.h", "climits", "limits.h",
                 "cmath", "math.h", "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h")


def items(text):
    """Top-level items: (kind, text) with kind 'pre' (a preprocessor line), 'open'/'close' (an
    anonymous namespace's braces), 'blank', 'comment' or 'decl'."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i] in " \t\r":
            i += 1
            continue
        if text[i] == "\n":
            out.append(("blank", "\n"))
            i += 1
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            if text.startswith("//", i):
                end = text.find("\n", i)
            else:
                end = text.find("*/", i)
                end = -1 if end < 0 else end + 2  # an unterminated comment runs to the end
            end = n if end < 0 else end
            if end < n and text[end] == "\n":
                end += 1
            out.append(("comment", text[i:end]))
            i = end
            continue
        if text[i] == "#":
            end = i
            while True:
                end = text.find("\n", end)
                if end < 0 or text[end - 1] != "\\":
                    break
                end += 1
            end = n if end < 0 else end + 1
            out.append(("pre", text[i:end]))
            i = end
            continue
        match = re.match(r"namespace\s*\{", text[i:])
        if match:
            out.append(("open", "namespace {"))
            i += match.end()
            continue
        if text[i] == "}":
            end = text.find("\n", i)
            end = n if end < 0 else end + 1
            out.append(("close", text[i:end]))
            i = end
            continue
        # A declaration: up to a ';' outside brackets, or the '}' that closes its body (then a ';').
        depth, j = 0, i
        while j < n:
            c = text[j]
            if c in "\"'":
                j += 1
                while j < n and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
            elif text.startswith("//", j):
                j = text.find("\n", j) - 1 if "\n" in text[j:] else n
            elif text.startswith("/*", j):
                j = text.find("*/", j) + 1 if "*/" in text[j:] else n
            elif c in "({[":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0 and c == "}":
                    rest = re.match(r"\s*;", text[j + 1:])
                    after_body = text[j + 1:j + 1 + (rest.end() if rest else 0)]
                    j += len(after_body)
                    break
            elif c == ";" and depth == 0:
                break
            j += 1
        # A comment on the rest of the declaration's last line stays with it.
        tail = re.match(r"[ \t]*(//[^\n]*)?\n?", text[j + 1:])
        out.append(("decl", text[i:j + 1] + tail.group(0)))
        i = j + 1 + tail.end()
    return out


def side(declaration):
    """'device', 'host' or 'both'."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", declaration, flags=re.S)
    if re.search(r"\b(__global__|__constant__)\b", code):
        return "device"
    if re.match(r"\s*namespace\s+\w+\s*=", code) or re.match(r"\s*using\s+namespace\s+(nvcuda|cooperative_groups)", code):
        return "device"
    head = code.split("{", 1)[0]
    is_function = "(" in head and "{" in code and not re.match(r"\s*(struct|class|union|enum)\b", head)
    if is_function and re.search(r"\b__host__\b", head) and re.search(r"\b__device__\b", head):
        return "both"
    if re.search(r"\b__device__\b", head if is_function else code):
        return "device"
    if is_function or code.lstrip().startswith('extern "C"'):
        return "host"
    return "both"


def launches(text):
    """`kernel<<<a, b, c, d>>>(` as `KSMITH_LAUNCH(a, b, c, d, kernel)(`."""
    out, i = [], 0
    while True:
        at = text.find("<<<", i)
        if at < 0:
            return "".join(out) + text[i:]
        # The kernel expression before it: an identifier (with ::) and template arguments.
        start = at
        while start > 0 and text[start - 1].isspace():
            start -= 1
        if text[start - 1] == ">":
            depth = 0
            while start > 0:
                start -= 1
                depth += {">": 1, "<": -1}.get(text[start], 0)
                if depth == 0:
                    break
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_:"):
            start -= 1
        kernel = re.sub(r"\s+", " ", text[start:at]).strip()
        end = text.find(">>>", at)
        config = [part.strip() for part in split_arguments(text[at + 3:end])]
        config += ["0", "0"][len(config) - 2:] if len(config) < 4 else []
        out.append(text[i:start] + f"KSMITH_LAUNCH({', '.join(config)}, {kernel})")
        i = end + 3


def split_arguments(text):
    parts, depth, current = [], 0, ""
    for c in text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    return parts + [current]


def convert(text):
    parsed = items(text)
    header, includes, body = [], {"both": [], "device": [], "host": []}, []
    seen_code = False
    for kind, item in parsed:
        if kind == "pre" and item.startswith("#include"):
            target = re.search(r"[<\"]([^>\"]+)[>\"]", item).group(1)
            where = ("device" if target.startswith(DEVICE_INCLUDES) else
                     "both" if target in BOTH_INCLUDES else "host")
            includes[where].append(item)
            seen_code = True
        elif not seen_code and kind in ("comment", "blank"):
            header.append(item)
        elif kind == "blank" and body and body[-1][0] == "blank":
            continue  # the includes' removal leaves blank lines behind: one is enough
        else:
            seen_code = True
            body.append((kind, item))
    sections = {"both": [], "device": [], "host": []}
    pending = []  # comments and blank lines: they go with the declaration after them
    namespaced = False
    for kind, item in body:
        if kind in ("comment", "blank"):
            pending.append(item)
            continue
        if kind == "open":
            namespaced, pending = True, []
            continue
        if kind == "close":
            namespaced, pending = False, []
            continue
        where = "both" if kind == "pre" else side(item)
        entry = "".join(pending) + item
        sections[where].append((namespaced and not item.lstrip().startswith('extern "C"'), launches(entry)))
        pending = []

    def block(entries):
        text, inside = "", False
        for namespaced, entry in entries:
            if namespaced != inside:
                text += "namespace {\n" if namespaced else "\n}  // namespace\n"
                inside = namespaced
            text += entry.rstrip("\n") + "\n"
        if inside:
            text += "\n}  // namespace\n"
        return text.lstrip("\n")

    out = "".join(header).rstrip("\n") + "\n"
    out += "".join(includes["both"]) + "#include <ksmith/launch.h>\n\n"
    if sections["both"]:
        out += block(sections["both"]) + "\n"
    out += "#ifdef KSMITH_DEVICE\n" + "".join(includes["device"])
    out += ("\n" if includes["device"] else "") + block(sections["device"]) + "#endif  // KSMITH_DEVICE\n\n"
    out += "#ifdef KSMITH_HOST\n" + "".join(includes["host"])
    out += ("\n" if includes["host"] else "") + block(sections["host"]) + "#endif  // KSMITH_HOST\n"
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    text = open(sys.argv[1]).read()
    if "ksmith/launch.h" in text:
        sys.exit(f"nvrtc_convert.py: error: {sys.argv[1]} is in the NVRTC form already")
    converted = convert(text)
    if len(sys.argv) == 3:
        open(sys.argv[2], "w").write(converted)
    else:
        sys.stdout.write(converted)


if __name__ == "__main__":
    main()
