"""What a candidate may name: closed lists, read by the static rules in `static.py`.

Every list here is a whitelist: what is not in it is rejected. A module root is never enough,
because modules re-export other modules (`typing.sys`, `triton.language.core.builtins`,
`tl.math.wraps` is `functools.wraps`), and those reach the OS, the interpreter's frames and the
judge. So names of modules are listed as full dotted paths, and attributes of values (tensors,
dicts, device properties; tl tensors inside kernels) as names.

The triton lists are written out, not derived from `dir()` at import: the static gate stays cheap
(no triton import in the judge) and a new triton cannot widen it unseen. tests/verify/test_static.py
checks that every listed triton path exists in the installed triton and is not a module.
"""

from __future__ import annotations

import builtins
import math

import torch

# The generated library's run-time support, for its shape-bucket lookup alone (LIBRARY_PATHS):
# the seeds' `_config` calls it, and so does a kernel promoted from them, so the lookup is
# written once. Importing it imports kernelgen_ops, whose operators stay unlisted: a candidate
# that called a shipped kernel would be judged on work it did not do.
LIBRARY_RUNTIME = "kernelgen_ops._runtime"
LIBRARY_PATHS = frozenset({f"{LIBRARY_RUNTIME}.nearest_bucket"})

# Modules a candidate may import (`import X`, `from X import ...`) and walk into. A module is never
# a value: `tl.math` alone is rejected, only its listed members pass.
MODULES = frozenset(
    {"torch", "triton", "triton.language", "triton.language.math", "triton.language.extra",
     "triton.language.extra.libdevice", "math", "functools", "typing", "itertools", "operator",
     "triton.tools.tensor_descriptor", LIBRARY_RUNTIME}
)  # fmt: skip
# Hopper's TMA from the host: a descriptor of a tensor the launcher holds (its base, shape,
# strides and block), which the kernel loads through (`desc.load([i, j])`). It reaches no memory
# a pointer in the kernel could not (the candidate's process holds no judge's buffer), and it
# needs no global allocator, unlike descriptors made in the kernel (`tl.make_tensor_descriptor`
# wants `triton.set_allocator`, global state, which stays refused). The warp-specialized
# pipelines that keep Hopper's tensor cores busy (fp8_gemm's scale FMA beside the next block's
# product) are built on it in Triton 3.6.
TENSOR_DESCRIPTOR = frozenset(
    {"triton.tools.tensor_descriptor.TensorDescriptor",
     "triton.tools.tensor_descriptor.TensorDescriptor.from_tensor"}
)  # fmt: skip

_TRITON = ("jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2")

# triton.language: dir() in Triton 3.6, minus
# - its submodules (core, extra, math, random, standard, target_info): they re-export the
#   builtins, typing and functools;
# - device_print and static_print, which write into the judge's streams (as print does);
# - inline_asm_elementwise: device code the rules cannot read (it also fails in the interpreter);
# - helpers of its own implementation (str_to_ty, pi32_t, philox_impl, bitonic_merge,
#   pair_uniform_to_normal, uint_to_uniform_float) and typing plumbing (constexpr_type,
#   tuple_type, tensor_descriptor_type, condition, const, slice, tuple, void).
_TL = """
abs add advance arange argmax argmin associative_scan assume atomic_add atomic_and atomic_cas
atomic_max atomic_min atomic_or atomic_xchg atomic_xor broadcast broadcast_to cast cat cdiv ceil
clamp cos cumprod cumsum debug_barrier device_assert div_rn dot dot_scaled erf exp exp2
expand_dims fdiv flip floor fma full gather histogram interleave join load load_tensor_descriptor
log log2 make_block_ptr make_tensor_descriptor map_elementwise max max_constancy max_contiguous
maximum min minimum mul multiple_of num_programs permute philox program_id rand rand4x randint
randint4x randn randn4x ravel reduce reduce_or reshape rsqrt sigmoid sin softmax sort split sqrt
sqrt_rn static_assert store store_tensor_descriptor sub sum swizzle2d topk trans umulhi view
where xor_sum zeros zeros_like
bfloat16 float16 float32 float64 float8e4b15 float8e4b8 float8e4nv float8e5 float8e5b16
int1 int8 int16 int32 int64 uint8 uint16 uint32 uint64
constexpr tensor dtype pointer_type block_type tensor_descriptor range static_range
TRITON_MAX_TENSOR_NUMEL PropagateNan.ALL PropagateNan.NONE
""".split()
# tl.math: its functions only (it also re-exports `core`, `wraps` and `List`, `T`).
_TL_MATH = """
abs ceil cos div_rn erf exp exp2 fdiv floor fma log log2 rsqrt sin sqrt sqrt_rn umulhi
""".split()
# triton.language.extra.libdevice (the backend-neutral entry point of Triton 3): all its functions.
_LIBDEVICE = """
abs acos acosh add_rd add_rn add_ru add_rz asin asinh atan atan2 atanh brev byte_perm cbrt ceil
clz copysign cos cosh cospi cyl_bessel_i0 cyl_bessel_i1 div_rd div_rn div_ru div_rz
double2float_rd double2float_rn double2float_ru double2float_rz double2hiint double2int_rd
double2int_rn double2int_ru double2int_rz double2ll_rd double2ll_rn double2ll_ru double2ll_rz
double2loint double2uint_rd double2uint_rn double2uint_ru double2uint_rz double2ull_rd
double2ull_rn double2ull_ru double2ull_rz double_as_longlong erf erfc erfcinv erfcx erfinv exp
exp10 exp2 expm1 fast_cosf fast_dividef fast_exp10f fast_expf fast_log10f fast_log2f fast_logf
fast_powf fast_sinf fast_tanf fast_tanhf fdim ffs finitef float2int_rd float2int_rn float2int_ru
float2int_rz float2ll_rd float2ll_rn float2ll_ru float2ll_rz float2uint_rd float2uint_rn
float2uint_ru float2uint_rz float2ull_rd float2ull_rn float2ull_ru float2ull_rz float_as_int
float_as_uint floor fma fma_rd fma_rn fma_ru fma_rz fmod hadd hiloint2double hypot ilogb
int2double_rn int2float_rd int2float_rn int2float_ru int2float_rz int_as_float isfinited isinf
isnan j0 j1 jn ldexp lgamma ll2double_rd ll2double_rn ll2double_ru ll2double_rz ll2float_rd
ll2float_rn ll2float_ru ll2float_rz llrint llround log log10 log1p log2 logb longlong_as_double
mul24 mul_rd mul_rn mul_ru mul_rz mulhi nearbyint nextafter norm3d norm4d normcdf normcdfinv
popc pow rcbrt rcp64h rcp_rd rcp_rn rcp_ru rcp_rz remainder rhadd rhypot rint rnorm3d rnorm4d
round rsqrt rsqrt_rn sad saturatef scalbn signbit sin sinh sinpi sqrt sqrt_rd sqrt_rn sqrt_ru
sqrt_rz sub_rd sub_rn sub_ru sub_rz tan tanh tgamma trunc uint2double_rn uint2float_rd
uint2float_rn uint2float_ru uint2float_rz uint_as_float ull2double_rd ull2double_rn
ull2double_ru ull2double_rz ull2float_rd ull2float_rn ull2float_ru ull2float_rz y0 y1 yn
""".split()

# What the launcher may touch in torch: allocation, dtypes and layouts, device queries.
TORCH_LAUNCHER = frozenset(
    {"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
     "torch.Tensor", "torch.Size", "torch.dtype", "torch.device", "torch.finfo", "torch.iinfo",
     "torch.is_tensor", "torch.is_floating_point", "torch.is_complex", "torch.cuda.is_available",
     "torch.cuda.device", "torch.cuda.device_count", "torch.cuda.current_device",
     "torch.cuda.get_device_properties", "torch.cuda.get_device_capability",
     "torch.cuda.get_device_name", "torch.contiguous_format", "torch.preserve_format",
     "torch.channels_last", "torch.strided"}
)  # fmt: skip
# dtypes are values, never modules; deriving them follows torch's own list.
DTYPES = frozenset(f"torch.{n}" for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype))

# Tensor attributes a launcher may use: queries, views and layout copies.
TENSOR_OK = frozenset(
    {"contiguous", "view", "reshape", "view_as", "reshape_as", "stride", "size", "dim",
     "ndimension", "numel", "nelement", "element_size", "data_ptr", "storage_offset",
     "get_device", "dim_order", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim",
     "moveaxis", "unsqueeze", "squeeze", "flatten", "unflatten", "expand", "expand_as",
     "as_strided", "narrow", "select", "unbind", "split", "tensor_split", "chunk", "diagonal",
     "unfold", "detach", "new_empty", "new_empty_strided", "new_zeros", "shape", "dtype",
     "device", "layout", "ndim", "itemsize", "nbytes", "requires_grad", "T", "mT", "H", "mH",
     "real", "imag", "name",
     # Predicates on metadata; `is_nonzero` is left out: it reads the tensor's value.
     "is_complex", "is_conj", "is_contiguous", "is_cpu", "is_cuda", "is_floating_point",
     "is_inference", "is_leaf", "is_meta", "is_neg", "is_nested", "is_pinned", "is_quantized",
     "is_same_size", "is_shared", "is_signed", "is_sparse", "is_sparse_csr"}
)  # fmt: skip

PATHS = (
    frozenset(f"triton.{n}" for n in _TRITON)
    | frozenset(f"triton.language.{n}" for n in _TL)
    | frozenset(f"triton.language.math.{n}" for n in _TL_MATH)
    | frozenset(f"triton.language.extra.libdevice.{n}" for n in _LIBDEVICE)
    | TORCH_LAUNCHER
    | DTYPES
    | LIBRARY_PATHS
    | TENSOR_DESCRIPTOR
    | frozenset(f"torch.Tensor.{n}" for n in TENSOR_OK)
    # math holds only pure functions and float constants: all of it.
    | frozenset(f"math.{n}" for n in dir(math) if not n.startswith("_"))
    # functools.partial is left out: it binds objects into a callable that outlives the call.
    | frozenset({"functools.lru_cache", "functools.cache", "functools.reduce"})
    | frozenset(
        f"typing.{n}"
        for n in (
            "Any",
            "Callable",
            "Dict",
            "Final",
            "List",
            "Literal",
            "Mapping",
            "Optional",
            "Sequence",
            "Tuple",
            "Union",
        )
    )  # fmt: skip
    # count, cycle, repeat and tee are left out: they exist to carry state from one step to the
    # next, and a stored one carries it from one call to the next.
    | frozenset(
        f"itertools.{n}"
        for n in (
            "accumulate",
            "chain",
            "chain.from_iterable",
            "combinations",
            "pairwise",
            "permutations",
            "product",
        )
    )  # fmt: skip
    # attrgetter, methodcaller (getattr by another name) and setitem & co (item assignment by
    # another name) are left out.
    | frozenset(
        f"operator.{n}"
        for n in ("add", "sub", "mul", "floordiv", "truediv", "mod", "neg", "index", "itemgetter")
    )
)
# Named so the rejection says why: getattr by another name.
DYNAMIC = frozenset({"operator.attrgetter", "operator.methodcaller"})
# Paths a kernel may name; torch has its own rule there.
KERNEL_ROOTS = ("triton.language.", "math.")

DECORATORS_KERNEL = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})
DECORATORS_CACHE = frozenset({"functools.lru_cache", "functools.cache"})
# The only calls module level may make: constant builders for meta-parameters, and math's
# functions (pure, of numbers: `LOG2E = tl.constexpr(math.log2(math.e))`). Their arguments must be
# constants in turn, so nothing else runs at import.
TOP_LEVEL_CALLS = frozenset({"triton.language.constexpr", "triton.Config"}) | frozenset(
    f"math.{n}" for n in dir(math) if not n.startswith("_") and callable(getattr(math, n))
)
TOP_LEVEL_BUILTINS = frozenset({"dict", "range"})

# Raising ends the call with an error, which the sandbox judges; the classes carry no state.
EXCEPTIONS = frozenset(
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
)
# Builtins the launcher may name. Left out, among others: getattr/setattr/delattr/hasattr/vars/
# dir/globals/locals (attributes by name, past every rule), eval/exec/compile/__import__/
# breakpoint/open/input, type (type(type(x)) is the metaclass, which makes classes), object/super/
# property/classmethod/staticmethod (classes), iter/next (stateful iterators), memoryview/bytearray,
# format and repr (format specs and reprs walk objects), and print: a candidate needs no output,
# and its lines would land in the judge's logs looking like the judge's own.
BUILTINS = (
    frozenset(
        {
            "abs",
            "all",
            "any",
            "bool",
            "dict",
            "divmod",
            "enumerate",
            "filter",
            "float",
            "frozenset",
            "int",
            "isinstance",
            "len",
            "list",
            "map",
            "max",
            "min",
            "pow",
            "range",
            "reversed",
            "round",
            "set",
            "slice",
            "sorted",
            "str",
            "sum",
            "tuple",
            "zip",
            "Ellipsis",
            "NotImplemented",
        }
    )  # fmt: skip
    | EXCEPTIONS
)
# Triton's code generator supports these builtins in a kernel (print is left out as above;
# getattr and hasattr as everywhere).
KERNEL_BUILTINS = (
    frozenset({"len", "range", "float", "int", "isinstance", "min", "max"}) | EXCEPTIONS
)
# Derived, so a builtin added by a newer Python is forbidden until someone lists it.
FORBIDDEN_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("__")) - BUILTINS
DUNDER_OK = frozenset({"__name__", "__doc__"})

# CPython's frame, generator, coroutine, async-generator, traceback, code and cell attributes:
# from any of them the stack is one step away.
FRAME_PREFIXES = ("f_", "gi_", "cr_", "ag_", "tb_", "co_")
FRAME_NAMES = frozenset({"cell_contents", "_getframe", "currentframe", "getframe"})

# Attributes of values a launcher may use, beyond TENSOR_OK: dict, list, str and int methods
# (not str.format/format_map: a format string walks attributes and items by name), dtype and
# finfo fields, torch.device fields, CUDA device properties, triton.Config fields.
VALUE_ATTRS = (
    TENSOR_OK
    | frozenset(
        {
            "get",
            "items",
            "keys",
            "values",
            "copy",
            "update",
            "setdefault",
            "pop",
            "popitem",
            "clear",
            "append",
            "extend",
            "insert",
            "remove",
            "index",
            "count",
            "reverse",
            "rsplit",
            "join",
            "startswith",
            "endswith",
            "strip",
            "lstrip",
            "rstrip",
            "lower",
            "upper",
            "replace",
            "bit_length",
            "eps",
            "tiny",
            "bits",
            "resolution",
            "smallest_normal",
            "multi_processor_count",
            "major",
            "minor",
            "total_memory",
            "warp_size",
            "max_threads_per_multi_processor",
            "regs_per_multiprocessor",
            "shared_memory_per_block",
            "shared_memory_per_block_optin",
            "shared_memory_per_multiprocessor",
            "L2_cache_size",
            "is_integrated",
            "is_multi_gpu_board",
            "uuid",
            "kwargs",
            "num_warps",
            "num_stages",
            "num_ctas",
        }
    )  # fmt: skip
)
# Every other public Tensor attribute computes, moves data, syncs or reaches storage/autograd/
# streams: those get the launcher-arithmetic reason rather than the generic one. `values` and
# `index` are far more common on dicts and lists than on tensors and do no arithmetic.
TENSOR_DENIED = frozenset(
    n for n in dir(torch.Tensor) if not n.startswith("_") and n not in TENSOR_OK
) - {"values", "index"}
# Tensor methods that are plain data when read without a call: `torch.finfo(dt).max`,
# `x.device.type`.
FIELDS = frozenset({"max", "min", "type"})

# Attributes of values inside kernels: tl.tensor views and casts, tl.dtype fields and predicates,
# tl.constexpr's value, tensor descriptors' block loads and stores. Left out: tl.tensor's
# methods that are also torch.Tensor methods that compute (sum, max, exp, sigmoid, cumsum, sort,
# gather, item, logical_and...): under the CPU interpreter a tl.constexpr argument can arrive as
# the real torch tensor, and `X.sum()` on it computes outside any kernel. Write tl.sum(x).
KERNEL_ATTRS = frozenset(
    {"to", "cast", "reshape", "view", "permute", "trans", "broadcast_to", "expand_dims", "ravel",
     "split", "advance", "T", "dtype", "shape", "type", "numel", "element_ty", "scalar",
     "primitive_bitwidth", "int_bitwidth", "value", "block_shape", "load", "store",
     "is_bf16", "is_block", "is_bool", "is_floating", "is_fp16", "is_fp32", "is_fp64", "is_fp8",
     "is_int", "is_int1", "is_int8", "is_int16", "is_int32", "is_int64", "is_int_signed",
     "is_int_unsigned", "is_ptr", "is_standard_floating", "is_uint8", "is_uint16", "is_uint32",
     "is_uint64"}
)  # fmt: skip
# `x.type` is a tl.tensor field; `X.type(...)` would be torch's cast.
KERNEL_FIELDS = frozenset({"type"})

# One program on both devices (rules/device.py). What tells the device a launcher runs on, read
# from a value: `x.device` (and its `.type`, `.index`), `x.is_cuda`, `x.get_device()`,
# `x.type()` ('torch.cuda.FloatTensor'), pinned and shared memory (always shared on CUDA); and the
# device-property fields that name or measure one board (`name`, `uuid`, `total_memory`, the L2
# size), which the interpreter's H200 stand-in cannot promise to match.
DEVICE_ATTRS = frozenset(
    {"device", "is_cuda", "is_cpu", "is_meta", "get_device", "is_pinned", "is_shared", "type",
     "name", "uuid", "total_memory", "L2_cache_size", "is_integrated", "is_multi_gpu_board"}
)  # fmt: skip
# The same read from torch.cuda: is there a GPU, how many, which, what is it called.
DEVICE_PATHS = frozenset(
    {"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.current_device",
     "torch.cuda.get_device_name"}
)  # fmt: skip
# Where a device may go: the `device=` of an allocation, and the device argument of torch.cuda's
# property queries, which under the interpreter answer with the H200's figures whatever device
# they are given (and of `torch.cuda.device`, which selects and returns nothing).
ALLOCATORS = frozenset(
    {"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like",
     "torch.Tensor.new_empty", "torch.Tensor.new_empty_strided", "torch.Tensor.new_zeros"}
)  # fmt: skip
ALLOCATOR_METHODS = frozenset({"new_empty", "new_empty_strided", "new_zeros"})
DEVICE_ARGUMENTS = frozenset(
    {"torch.cuda.get_device_properties", "torch.cuda.get_device_capability",
     "torch.cuda.get_device_name", "torch.cuda.device"}
)  # fmt: skip

# Matched component-wise: the path itself or anything under it. None of these is listed above;
# they are named so that the rejection gives the specific reason.
ESCAPES = (
    "torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.cuda.StreamContext",
    "torch.cuda.stream", "torch.cuda.streams", "torch.cuda.current_stream",
    "torch.cuda.default_stream", "torch.cuda.Event", "torch.cuda.graph", "torch.cuda.graphs",
    "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables", "torch.cuda.synchronize",
    "torch.cuda.empty_cache", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.cuda.amp", "torch.Stream", "torch.Event", "torch.compile", "torch.jit",
    "torch.library", "torch.ops", "torch.backends", "torch.utils", "torch.autograd",
    "torch.multiprocessing", "torch.distributed", "torch.fx", "torch.export", "torch.overrides",
    "torch.func", "torch.hub", "torch.load", "torch.save", "torch.random", "torch.manual_seed",
    "torch.seed", "torch.use_deterministic_algorithms", "torch.accelerator",
    "triton.testing", "triton.runtime", "triton.compiler", "triton.compile", "triton.knobs",
    "triton.backends", "triton.set_allocator",
)  # fmt: skip
# Matched as plain string prefixes: private modules, setters of global state, allocator knobs.
ESCAPE_PREFIXES = ("torch._", "torch.set_", "torch.cuda._", "torch.cuda.set_",
                   "torch.cuda.memory", "torch.cuda.caching_allocator", "triton._")  # fmt: skip

# Methods that change a list, dict or set in place: on module state they are state kept between
# calls.
MUTATORS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove",
     "add", "discard", "sort", "reverse"}
)  # fmt: skip
