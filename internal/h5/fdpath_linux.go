package h5

// fdDir holds a name for each of the process's descriptors.
const fdDir = "/proc/self/fd"
