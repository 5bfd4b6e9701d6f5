#include "interop.h"

#include "cuda_context.h"
#include "cureduce.h"
#include "errors.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;

namespace cureduce_py {

namespace {

constexpr int DL_CUDA = 2; // DLPack's device type of CUDA device memory

using nb::dlpack::dtype_code;

struct DlpackType {
  cureduce_dtype dtype;
  dtype_code code;
  uint8_t bits;
};

constexpr DlpackType DLPACK_TYPES[] = {
    {CUREDUCE_F32, dtype_code::Float, 32},
    {CUREDUCE_F64, dtype_code::Float, 64},
    {CUREDUCE_F16, dtype_code::Float, 16},
    {CUREDUCE_BF16, dtype_code::Bfloat, 16},
    {CUREDUCE_F8_E4M3, dtype_code::Float8_E4M3FN, 8},
    {CUREDUCE_F8_E5M2, dtype_code::Float8_E5M2, 8},
    {CUREDUCE_I8, dtype_code::Int, 8},
    {CUREDUCE_I32, dtype_code::Int, 32},
    {CUREDUCE_I64, dtype_code::Int, 64},
};

// The cureduce dtype of a DLPack type, or -1 when the library has none.
int dtype_of(nb::dlpack::dtype t) {
  if (t.lanes != 1)
    return -1;
  for (const DlpackType &d : DLPACK_TYPES)
    if (t.code == static_cast<uint8_t>(d.code) && t.bits == d.bits)
      return static_cast<int>(d.dtype);
  return -1;
}

nb::dlpack::dtype dlpack_type_of(int dtype) {
  for (const DlpackType &d : DLPACK_TYPES)
    if (static_cast<int>(d.dtype) == dtype)
      return nb::dlpack::dtype{static_cast<uint8_t>(d.code), d.bits, 1};
  throw nb::value_error("cureduce: not a cureduce dtype");
}

// A DLPack tensor taken from a producer's capsule. While this object lives the producer keeps
// the memory alive, so a result that may be read before its kernel has run holds on to it.
struct DlpackInput {
  nb::ndarray<nb::ro> array;

  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(array.data()); }
  nb::tuple shape() const {
    nb::list s;
    for (size_t i = 0; i < array.ndim(); ++i)
      s.append(array.shape(i));
    return nb::tuple(s);
  }
  nb::tuple strides() const { // in elements
    nb::list s;
    for (size_t i = 0; i < array.ndim(); ++i)
      s.append(array.stride(i));
    return nb::tuple(s);
  }
  std::string dtype() const { // the cureduce name, or DLPack's (code, bits) when there is none
    const int d = dtype_of(array.dtype());
    if (d >= 0)
      return cureduce_dtype_name(static_cast<cureduce_dtype>(d));
    return "dlpack code " + std::to_string(array.dtype().code) + " bits " +
           std::to_string(array.dtype().bits) + " lanes " + std::to_string(array.dtype().lanes);
  }
};

// One stream-ordered pool per device for the results the extension allocates itself. Its
// release threshold keeps freed memory for reuse instead of returning it at every
// synchronisation, as the device's default pool would. Pools live as long as the process.
cudaMemPool_t pool_for(int device) {
  static std::mutex mu;
  static auto *pools = new std::unordered_map<int, cudaMemPool_t>;
  std::lock_guard<std::mutex> lock(mu);
  const auto found = pools->find(device);
  if (found != pools->end())
    return found->second;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
    forget_cuda_error();
    return nullptr;
  }
  uint64_t keep_all = UINT64_MAX;
  (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all);
  (*pools)[device] = pool;
  return pool;
}

// Device memory for one result, allocated in the order of `stream` and freed in the order of the
// same stream when the Python object goes: by then every consumer that honours DLPack or the CUDA
// array interface has ordered its reads before the release (JAX frees imported buffers only
// after their last use). The stream must outlive the buffer.
class DeviceBuffer {
public:
  DeviceBuffer(size_t nbytes, int device, uintptr_t stream)
      : nbytes_(nbytes), device_(device), stream_(stream) {
    Outcome out;
    {
      nb::gil_scoped_release unlocked;
      DeviceGuard guard(device);
      cudaMemPool_t pool = guard.ok() ? pool_for(device) : nullptr;
      if (!pool)
        out = {CUREDUCE_ERROR_CUDA, "cureduce: device memory pool on device " + std::to_string(device)};
      else if (cudaMallocFromPoolAsync(&ptr_, nbytes ? nbytes : 1, pool, as_stream()) != cudaSuccess) {
        forget_cuda_error();
        ptr_ = nullptr;
        out = {CUREDUCE_ERROR_OUT_OF_MEMORY,
               "cureduce: " + std::to_string(nbytes) + " bytes on device " + std::to_string(device)};
      }
    }
    out.raise_if_failed();
  }
  ~DeviceBuffer() {
    if (!ptr_)
      return;
    DeviceGuard guard(device_);
    if (!guard.ok() || cudaFreeAsync(ptr_, as_stream()) != cudaSuccess)
      forget_cuda_error(); // at interpreter exit the context may be gone already
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  uintptr_t ptr() const { return reinterpret_cast<uintptr_t>(ptr_); }
  size_t nbytes() const { return nbytes_; }
  int device() const { return device_; }
  uintptr_t stream() const { return stream_; }

  nb::object keep; // what must stay alive as long as the result (the input's DLPack import)

private:
  cudaStream_t as_stream() const { return reinterpret_cast<cudaStream_t>(stream_); }
  void *ptr_ = nullptr;
  size_t nbytes_;
  int device_;
  uintptr_t stream_;
};

// A DLPack-exporting view of a buffer as a C-order array of `shape` and `dtype`; it keeps the
// buffer alive.
nb::ndarray<nb::array_api> buffer_view(nb::pointer_and_handle<DeviceBuffer> self, std::vector<size_t> shape,
                                       int dtype) {
  return nb::ndarray<nb::array_api>(reinterpret_cast<void *>(self.p->ptr()), shape.size(), shape.data(),
                                    self.h, nullptr, dlpack_type_of(dtype), DL_CUDA, self.p->device());
}

// Orders everything enqueued on `waiter` from now on after what `producer` holds now.
void stream_wait(uintptr_t waiter, uintptr_t producer, int device) {
  Outcome out;
  {
    nb::gil_scoped_release unlocked;
    DeviceGuard guard(device);
    cudaEvent_t event = nullptr;
    if (!guard.ok() || cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer)) != cudaSuccess ||
        cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(waiter), event, 0) != cudaSuccess) {
      forget_cuda_error();
      out = {CUREDUCE_ERROR_CUDA, "cureduce: ordering one stream after another"};
    }
    if (event)
      (void)cudaEventDestroy(event); // released once the recorded work completes
  }
  out.raise_if_failed();
}

// The device of memory at ptr, or -1 for host memory and addresses CUDA does not know.
int pointer_device(uintptr_t ptr) {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, reinterpret_cast<const void *>(ptr)) != cudaSuccess) {
    forget_cuda_error();
    return -1;
  }
  return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) ? attr.device : -1;
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    forget_cuda_error();
    raise_status(CUREDUCE_ERROR_NO_DEVICE, "cureduce");
  }
  return device;
}

} // namespace

void bind_interop(nb::module_ &m) {
  nb::class_<DlpackInput>(m, "DlpackInput", "A DLPack capsule taken over; keeps the producer's memory alive.")
      .def(
          "__init__", [](DlpackInput *self, nb::ndarray<nb::ro> a) { new (self) DlpackInput{std::move(a)}; },
          nb::arg("capsule"))
      .def_prop_ro("ptr", &DlpackInput::ptr)
      .def_prop_ro("device_id", [](const DlpackInput &d) { return d.array.device_id(); })
      .def_prop_ro("shape", &DlpackInput::shape)
      .def_prop_ro("strides", &DlpackInput::strides, "in elements")
      .def_prop_ro("dtype", &DlpackInput::dtype, "the cureduce dtype name, or a description of DLPack's");
  nb::class_<DeviceBuffer>(m, "DeviceBuffer", "Device memory for one result, freed in stream order.")
      .def(nb::init<size_t, int, uintptr_t>(), nb::arg("nbytes"), nb::arg("device"), nb::arg("stream"))
      .def_prop_ro("ptr", &DeviceBuffer::ptr)
      .def_prop_ro("nbytes", &DeviceBuffer::nbytes)
      .def_prop_ro("device", &DeviceBuffer::device)
      .def_prop_ro("stream", &DeviceBuffer::stream)
      .def_rw("keep", &DeviceBuffer::keep, nb::arg("value").none())
      .def("view", &buffer_view, nb::arg("shape"), nb::arg("dtype"),
           "A DLPack-exporting C-order view (shape, cureduce dtype id) that keeps the buffer alive.");
  m.def("stream_wait", &stream_wait, nb::arg("waiter"), nb::arg("producer"), nb::arg("device"),
        "Order later work on `waiter` after the work now on `producer` (an event, no host wait).");
  m.def("pointer_device", &pointer_device, nb::arg("ptr"),
        "The CUDA device of the memory at ptr, or -1 for host memory.");
  m.def("current_device", &current_device, "This thread's current CUDA device.");
}

} // namespace cureduce_py
