# flops.py: the reference's matrix products and convolutions as an expression over the task's dims.
import pytest

torch = pytest.importorskip("torch")

from ksmith_kb.flops import count_terms, flops_expression  # noqa: E402


def records_of(make, shapes):
    """(model, inputs, outputs) at each shape, as the importer's records hold them."""
    records = []
    for shape in shapes:
        model, inputs = make(**shape)
        with torch.no_grad():
            records.append((model, inputs, model(*inputs)))
    return records


def linear(batch, fin, fout):
    return torch.nn.Linear(fin, fout), (torch.randn(batch, fin),)


def test_a_linear_layer_counts_two_flops_per_multiply_add_over_its_dims():
    shapes = [{"batch": 2, "fin": 3, "fout": 5}, {"batch": 4, "fin": 3, "fout": 7}, {"batch": 2, "fin": 6, "fout": 5}]
    expression, note = flops_expression(torch, records_of(linear, shapes), ["batch", "fin", "fout"], shapes)
    assert expression == "2*batch*fin*fout"
    assert "counted" in note


def test_a_dim_constant_at_every_shape_is_a_number():
    shapes = [{"batch": 2, "fin": 3, "fout": 5}, {"batch": 4, "fin": 3, "fout": 5}]
    expression, _ = flops_expression(torch, records_of(linear, shapes), ["batch"], [{"batch": 2}, {"batch": 4}])
    assert expression == "30*batch"


def test_a_convolution_counts_its_output_times_its_kernel_and_square_sides_stay_two_dims():
    def conv(n, h):
        return torch.nn.Conv2d(3, 4, kernel_size=3, padding=1), (torch.randn(n, 3, h, h),)
    shapes = [{"n": 1, "h": 5, "w": 5}, {"n": 2, "h": 7, "w": 7}]
    expression, _ = flops_expression(torch, records_of(lambda n, h, w: conv(n, h), shapes), ["n", "h", "w"], shapes)
    # out [n, 4, h, w] x (cin 3 x 3 x 3): 2 * 4 * 27 = 216
    assert expression == "216*h*n*w"
    model, inputs, _ = records_of(lambda n, h, w: conv(n, h), shapes[:1])[0]
    assert sum(c * torch.tensor(e).prod().item() for c, e in count_terms(torch, model, inputs)) == 216 * 25


def test_elementwise_work_counts_nothing_and_an_unnamed_hidden_size_gives_up():
    relu = [(torch.nn.ReLU(), (torch.randn(4, 4),), None)]
    assert flops_expression(torch, relu, ["n"], [{"n": 4}])[0] == "0"

    class Hidden(torch.nn.Module):  # a hidden width that grows with the batch, named by no dim
        def forward(self, x):
            return x @ torch.ones(x.shape[1], 2 * x.shape[0])
    records = [(Hidden(), (torch.randn(b, 3),), None) for b in (2, 5)]
    expression, note = flops_expression(torch, records, ["b"], [{"b": 2}, {"b": 5}])
    assert expression == "0"
    assert "follows no dim" in note


def test_a_matmul_with_a_diagonal_counts_the_whole_product_the_reference_runs():
    # torch.diag(a) @ b: the reference's operators do n*n*m products where a kernel needs n*m:
    # the count is the reference's, which is why the task never uses it as a limit.
    class Diagonal(torch.nn.Module):
        def forward(self, a, b):
            return torch.diag(a) @ b
    shapes = [{"n": 3, "m": 4}, {"n": 5, "m": 4}, {"n": 3, "m": 6}]
    records = [(Diagonal(), (torch.randn(s["n"]), torch.randn(s["n"], s["m"])), None) for s in shapes]
    assert flops_expression(torch, records, ["n", "m"], shapes)[0] == "2*m*n*n"


def test_a_forward_that_fails_under_the_counter_counts_nothing_and_says_why():
    class Fails(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("only outside the counter")
    expression, note = flops_expression(torch, [(Fails(), (torch.randn(2),), None)], ["n"], [{"n": 2}])
    assert expression == "0"
    assert "raised RuntimeError" in note
