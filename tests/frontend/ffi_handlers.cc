// XLA FFI handlers that tests/frontend/test_ffi.py compiles, registers and calls from
// plait and from JAX: each exercises one part of the interface (attributes of every
// kind, several results, side effects, errors, layouts, aliasing).
#include <cmath>
#include <cstdint>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

// y = factor * x
static ffi::Error ScaleImpl(float factor, ffi::Buffer<ffi::F32> x,
                            ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = factor * x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Scale, ScaleImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("factor")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// (x + y, x * y), elementwise over f64
static ffi::Error SumProdImpl(ffi::Buffer<ffi::F64> x, ffi::Buffer<ffi::F64> y,
                              ffi::ResultBuffer<ffi::F64> s, ffi::ResultBuffer<ffi::F64> p) {
  if (x.element_count() != y.element_count())
    return ffi::Error::InvalidArgument("sum_prod: operands of different sizes");
  for (size_t i = 0; i < x.element_count(); ++i) {
    s->typed_data()[i] = x.typed_data()[i] + y.typed_data()[i];
    p->typed_data()[i] = x.typed_data()[i] * y.typed_data()[i];
  }
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(SumProd, SumProdImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F64>>()
                                  .Arg<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::F64>>()
                                  .Ret<ffi::Buffer<ffi::F64>>());

// Attributes of several kinds: y[i] = a * x[i] + b + offsets[i % len] (or - for
// mode "sub"); a negative b is an error.
static ffi::Error AffineImpl(double a, int64_t b, bool twice, std::string_view mode,
                             ffi::Span<const int64_t> offsets, ffi::Buffer<ffi::F32> x,
                             ffi::ResultBuffer<ffi::F32> y) {
  if (b < 0) return ffi::Error::InvalidArgument("affine: b must not be negative");
  if (offsets.size() == 0) return ffi::Error::InvalidArgument("affine: no offsets");
  double sign = mode == "sub" ? -1.0 : 1.0;
  for (size_t i = 0; i < x.element_count(); ++i) {
    double v = a * x.typed_data()[i] + sign * (b + offsets[i % offsets.size()]);
    y->typed_data()[i] = static_cast<float>(twice ? 2 * v : v);
  }
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Affine, AffineImpl,
                              ffi::Ffi::Bind()
                                  .Attr<double>("a")
                                  .Attr<int64_t>("b")
                                  .Attr<bool>("twice")
                                  .Attr<std::string_view>("mode")
                                  .Attr<ffi::Span<const int64_t>>("offsets")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// A dictionary attribute: y = x * scale["num"] / scale["den"]
static ffi::Error RatioImpl(ffi::Dictionary scale, ffi::Buffer<ffi::F32> x,
                            ffi::ResultBuffer<ffi::F32> y) {
  auto num = scale.get<int32_t>("num");
  auto den = scale.get<int32_t>("den");
  if (num.has_error() || den.has_error())
    return ffi::Error::InvalidArgument("ratio: scale needs i32 num and den");
  for (size_t i = 0; i < x.element_count(); ++i)
    y->typed_data()[i] = x.typed_data()[i] * *num / *den;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Ratio, RatioImpl,
                              ffi::Ffi::Bind()
                                  .Attr<ffi::Dictionary>("scale")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// A side effect: counts its calls, returning the count so far.
static int32_t calls = 0;
static ffi::Error CountImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::S32> n) {
  *n->typed_data() = ++calls;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Count, CountImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());
extern "C" int32_t count_calls() { return calls; }

// Copies its operand's memory as it lies: with layouts, the order XLA gave it.
static ffi::Error RawCopyImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(RawCopy, RawCopyImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// Adds 1 in place (its result aliases its operand): y = x + 1, counting batch rows.
static ffi::Error IncrementImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i] + 1;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Increment, IncrementImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
