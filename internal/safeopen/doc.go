// Package safeopen opens the files of a directory tree — Quarry's data
// root — so that what is read is confined to it, whatever happened to the
// paths since they were checked.
//
// The catalog resolves every data file to its real path under the root
// once, when it scans (symlinks inside the root are followed there). From
// then on a file is opened by that resolved path, relative to the root, and
// nothing on the way may be a symbolic link: a data file (or a directory
// above it) that is replaced by a symlink, or has a symlink renamed over
// it, after the scan is refused with ErrOutside instead of being followed.
// The opened descriptor is then checked with fstat: it must be a regular
// file and, when the caller knows which file it expects (the Identity the
// scan saw), the same file (device and inode), else ErrReplaced.
//
// How the confinement is enforced:
//   - Linux 5.6 and later: openat2(2) relative to a descriptor of the root
//     with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS:
//     the kernel refuses any symlink and any escape ("..", absolute
//     targets) during the lookup itself.
//   - Older Linux kernels (openat2 missing or filtered) and other Unix
//     systems: the path is walked one component at a time with
//     openat(2) and O_NOFOLLOW from the root's descriptor, so no symlink is
//     followed either. On systems without O_PATH (all but Linux) the
//     directories on the way must be readable, which the scan needs anyway.
//   - Other systems (Windows): os.Root confines the open to the root
//     (symlinks that stay inside it are followed); there is no device and
//     inode to compare, so Identity is always zero there.
//
// The root path itself is trusted: it is the operator's configuration,
// resolved once at start-up. Hard links are not symlinks; a hard link to a
// file outside the root can only be created by someone who may already read
// that file, and replacing a scanned file by one is caught by the identity
// check until the catalog re-reads the file.
//
// Files are opened read-only, close-on-exec, without becoming the
// controlling terminal and, on Unix, non-blocking until fstat has shown a
// regular file (so a FIFO swapped in cannot hang the open).
package safeopen
