#include "handle_cache.h"

#include "cuda_context.h"

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace cureduce_py {

namespace {

// Outside a capture, streams are told apart by cudaStreamGetId, unique for the life of the
// process: a new stream that reuses a destroyed one's address must not share its workspace while
// the old one's work runs. Inside a capture, by address (see handle_for).
struct Key {
  int device;
  unsigned long long stream_id;  // cudaStreamGetId, or the address while capturing
  unsigned long long capture_id; // 0 outside a capture; CUDA's ids are unique per process
  bool operator==(const Key &o) const {
    return device == o.device && stream_id == o.stream_id && capture_id == o.capture_id;
  }
};

struct KeyHash {
  size_t operator()(const Key &k) const {
    const uint64_t h = k.stream_id * 0x9E3779B97F4A7C15ull ^ k.capture_id * 0xC2B2AE3D27D4EB4Full ^
                       static_cast<uint64_t>(k.device);
    return std::hash<uint64_t>()(h);
  }
};

struct Cache {
  // Guards the fields below. Never held across a CUDA call: the graph destructor callback
  // takes it on CUDA's internal thread.
  std::mutex mu;
  std::unordered_map<Key, cureduce_handle, KeyHash> handles;
  std::unordered_map<int, std::vector<cureduce_handle>> spare; // by device
  size_t captured = 0;
};

// Never destroyed, and the handles in it are never freed: CUDA may run a graph's destructor
// callback during interpreter exit, and cureduce_destroy then could touch a dead context.
// Leaking them at exit is harmless; the driver reclaims the memory with the process.
Cache &cache() {
  static Cache *c = new Cache;
  return *c;
}

struct CapturedHandle {
  Key key;
  cureduce_handle handle;
};

// The destructor of a graph's user object: its handle becomes a spare. CUDA runs it after the
// graph and its executables are destroyed and their launches are done, on an internal thread
// where no CUDA call is allowed.
void CUDART_CB release_captured(void *p) {
  auto *owned = static_cast<CapturedHandle *>(p);
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.handles.erase(owned->key);
    --c.captured;
    c.spare[owned->key.device].push_back(owned->handle);
  }
  delete owned;
}

// A spare handle of `device`, or a new one. cureduce_create's cudaMalloc, and the wait for its
// own zeroing stream, are "unsafe" calls under global capture mode: on a capturing stream, or
// while any thread captures in that mode, they would fail and invalidate the capture. Relaxed
// mode lets them run; this is how PyTorch's caching allocator calls cudaMalloc during capture
// too.
cureduce_status new_handle(int device, cureduce_handle *h) {
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<cureduce_handle> &spare = c.spare[device];
    if (!spare.empty()) {
      *h = spare.back();
      spare.pop_back();
      return CUREDUCE_SUCCESS;
    }
  }
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  const cureduce_status st = cureduce_create(h);
  if (exchanged)
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
  else
    forget_cuda_error();
  return st;
}

// Gives the graph being captured a reference to a user object whose destructor returns the
// handle; on failure the handle is returned at once.
cureduce_status hand_to_graph(cudaGraph_t graph, const Key &key, cureduce_handle h) {
  auto *owned = new CapturedHandle{key, h};
  cudaUserObject_t object;
  if (cudaUserObjectCreate(&object, owned, release_captured, 1, cudaUserObjectNoDestructorSync) !=
      cudaSuccess) {
    forget_cuda_error();
    release_captured(owned);
    return CUREDUCE_ERROR_CUDA;
  }
  if (cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove) != cudaSuccess) {
    forget_cuda_error();
    (void)cudaUserObjectRelease(object, 1); // runs release_captured
    return CUREDUCE_ERROR_CUDA;
  }
  return CUREDUCE_SUCCESS;
}

} // namespace

cureduce_status handle_for(int device, cudaStream_t stream, cureduce_handle *handle, int *stream_device) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  cudaGraph_t graph = nullptr;
  if (cudaStreamGetCaptureInfo(stream, &capture, &capture_id, &graph) != cudaSuccess) {
    forget_cuda_error();
    return CUREDUCE_ERROR_CUDA;
  }
  if (capture == cudaStreamCaptureStatusInvalidated)
    return CUREDUCE_ERROR_CUDA; // the capture failed already; a launch would be refused
  const bool capturing = capture == cudaStreamCaptureStatusActive;
  // cudaStreamGetId and cudaStreamGetDevice on a capturing stream fail and invalidate the
  // capture (in every capture mode), so a capture's streams are told apart by their address:
  // none of them can be destroyed while the capture lasts.
  Key key{device, reinterpret_cast<uintptr_t>(stream), capture_id};
  *stream_device = device;
  if (!capturing) {
    key.capture_id = 0;
    if (cudaStreamGetId(stream, &key.stream_id) != cudaSuccess) {
      forget_cuda_error();
      return CUREDUCE_ERROR_INVALID_VALUE;
    }
  }

  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    const auto found = c.handles.find(key);
    if (found != c.handles.end()) {
      *handle = found->second;
      return CUREDUCE_SUCCESS;
    }
  }
  // A stream's id is never reused, so its device, checked here before its handle is kept, is
  // the key's device whenever the lookup above finds it.
  if (!capturing) {
    if (cudaStreamGetDevice(stream, stream_device) != cudaSuccess) {
      forget_cuda_error();
      return CUREDUCE_ERROR_INVALID_VALUE;
    }
    if (*stream_device != device)
      return CUREDUCE_ERROR_INVALID_VALUE;
  }
  cureduce_handle h = nullptr;
  const cureduce_status st = new_handle(device, &h);
  if (st != CUREDUCE_SUCCESS)
    return st;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    const auto placed = c.handles.emplace(key, h);
    if (!placed.second) { // another thread made one for this key meanwhile
      c.spare[device].push_back(h);
      *handle = placed.first->second;
      return CUREDUCE_SUCCESS;
    }
    if (capturing)
      ++c.captured;
  }
  if (capturing) {
    const cureduce_status given = hand_to_graph(graph, key, h);
    if (given != CUREDUCE_SUCCESS)
      return given;
  }
  *handle = h;
  return CUREDUCE_SUCCESS;
}

HandleCounts handle_counts() {
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  HandleCounts n;
  n.captured = c.captured;
  n.eager = c.handles.size() - c.captured;
  for (const auto &per_device : c.spare)
    n.spare += per_device.second.size();
  return n;
}

} // namespace cureduce_py
