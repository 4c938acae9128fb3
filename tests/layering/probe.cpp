// Compiled against one library's include directories with one header of
// another layer (KUBELOAD_PROBE_HEADER); tests/layering/check.cmake expects it
// to compile exactly when tests/layering/layers.txt lets that library include
// that layer.
#include KUBELOAD_PROBE_HEADER
