# The flop count of an imported KernelBench model, as an expression over its task's dims: the
# matrix products and convolutions its forward runs (what torch's FlopCounterMode counts; elementwise
# work is left out, so a memory-bound model counts 0), each written as a product of its operands'
# extents, each extent named by the task dim that equals it at every analysed shape. Counted with
# our own table under a TorchDispatchMode, which Debian's torch 1.13 has (FlopCounterMode came
# in 2.1). The count is the reference's operators' work, an upper bound of what a kernel needs
# (torch.diag(a) @ b counts a matmul): the task marks it `flops_counted = "reference"`, reported
# as GFLOP/s, never a physical limit.
from collections import OrderedDict


def _mm(args, out):
    a, b = args[0], args[1]
    return [(2, [a.shape[0], b.shape[1], a.shape[1]])]


def _addmm(args, out):
    return _mm(args[1:], out)


def _bmm(args, out):
    a, b = args[0], args[1]
    return [(2, [a.shape[0], a.shape[1], b.shape[2], a.shape[2]])]


def _baddbmm(args, out):
    return _bmm(args[1:], out)


def _convolution(args, out):
    x, weight = args[0], args[1]
    transposed = bool(args[6]) if len(args) > 6 else False
    kernel = list(weight.shape[2:])
    if transposed:  # every input element meets cout / groups x kernel weights
        return [(2, list(x.shape) + [weight.shape[1]] + kernel)]
    return [(2, list(out.shape) + [weight.shape[1]] + kernel)]


def _attention(args, out):
    q, k, v = args[0], args[1], args[2]
    batch = list(q.shape[:-2])
    return [(2, batch + [q.shape[-2], k.shape[-2], q.shape[-1]]),
            (2, batch + [q.shape[-2], k.shape[-2], v.shape[-1]])]


RULES = {"mm": _mm, "addmm": _addmm, "bmm": _bmm, "baddbmm": _baddbmm, "convolution": _convolution,
         "_convolution": _convolution, "_scaled_dot_product_flash_attention": _attention,
         "_scaled_dot_product_efficient_attention": _attention,
         "_scaled_dot_product_cudnn_attention": _attention}


def count_terms(torch, model, inputs):
    """The counted operators of one forward: [(coefficient, [extents])] in call order."""
    from torch.utils._python_dispatch import TorchDispatchMode

    terms = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            rule = RULES.get(func.overloadpacket.__name__)
            if rule is not None:
                terms.extend((c, [int(e) for e in extents]) for c, extents in rule(args, out))
            return out

    with torch.no_grad(), Recorder():
        model(*inputs)
    return terms


def flops_expression(torch, records, dims, values):
    """(expression, note) from forwards at several shapes: records[i] = (model, inputs, outputs)
    at the shape whose dim values are values[i]. "0" with a note where no term counts or a term's
    extent follows no dim (a hidden layer's size that changes with the shape)."""
    try:
        counted = [count_terms(torch, model, inputs) for model, inputs, _ in records]
    except Exception as error:  # a count for reports only: it never costs the problem its import
        return "0", f"counting the flops raised {type(error).__name__}: the flops are not counted"
    if not counted[0]:
        return "0", "no matrix product or convolution: the flops are not counted (memory-bound)"
    if any(len(terms) != len(counted[0]) or any(len(t[1]) != len(f[1]) for t, f in zip(terms, counted[0]))
           for terms in counted):
        return "0", "the forward runs different products at different shapes: the flops are not counted"
    monomials = OrderedDict()
    for index, (coefficient, first) in enumerate(counted[0]):
        names = []
        for axis in range(len(first)):
            extents = [terms[index][1][axis] for terms in counted]
            if all(e == extents[0] for e in extents):
                coefficient *= extents[0]
                continue
            matching = [d for d in dims if all(v.get(d) == e for v, e in zip(values, extents))]
            if not matching:
                return "0", (f"a product's extent ({', '.join(map(str, extents))} at the analysed shapes) "
                             "follows no dim of the task: the flops are not counted")
            # Dims equal at every analysed shape (a square image's height and width) are told
            # apart by position: a product's extents are distinct axes, so each takes one not yet used.
            names.append(next((d for d in matching if d not in names), matching[0]))
        key = tuple(sorted(names))
        monomials[key] = monomials.get(key, 0) + coefficient
    parts = ["*".join([str(c)] + list(names)) if c != 1 or not names else "*".join(names)
             for names, c in monomials.items()]
    return " + ".join(parts), "counted from the reference's matrix products and convolutions"
