"""cuDNN's own libcudnn.so.9 (the nvidia-cudnn wheel torch installs), called through ctypes with no GPU:
calls that need no device, printed as JSON. That library is a shim which finds each function in its
sub-libraries (libcudnn_graph.so.9, ...) by dlsym at the first call, as every cuDNN call of PyTorch does."""
import ctypes
import glob
import json
import os

import nvidia.cudnn

CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 17

path = glob.glob(os.path.join(list(nvidia.cudnn.__path__)[0], "lib", "libcudnn.so.9"))[0]
lib = ctypes.CDLL(path)
out = {"version": lib.cudnnGetVersion()}
desc = ctypes.c_void_p()
out["create"] = lib.cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, ctypes.byref(desc))
out["execute"] = lib.cudnnBackendExecute(None, None, None)  # no handle: CUDNN_STATUS_BAD_PARAM
out["destroy"] = lib.cudnnBackendDestroyDescriptor(desc)
print(json.dumps(out, sort_keys=True))
