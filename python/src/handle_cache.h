// The library's handles as the Python extension keeps them. A handle owns a workspace that one
// stream at a time may use, so there is one handle per (device, stream) used eagerly, created
// on first use; and, while a stream is being captured into a CUDA graph, one per (capture, stream),
// owned by that graph: its replays may run on any stream at any time, so no other work may share
// its workspace. When CUDA destroys the graph the handle becomes a spare for the next new key.
#pragma once

#include "cureduce.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace cureduce_py {

// The handle serving `stream` on `device`, which must be the current device. INVALID_VALUE when
// `stream` is no stream, or one of another device (its device, when known, in *stream_device).
// Thread-safe; call it without the GIL (creating a handle allocates and zeroes its workspace).
cureduce_status handle_for(int device, cudaStream_t stream, cureduce_handle *handle, int *stream_device);

struct HandleCounts {
  size_t eager = 0;    // serving a (device, stream)
  size_t captured = 0; // owned by a CUDA graph that still exists
  size_t spare = 0;    // returned by destroyed graphs, waiting for a new key
};

HandleCounts handle_counts();

} // namespace cureduce_py
