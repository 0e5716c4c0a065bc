// Package images inspects container images for what manifests cannot show:
// how the executables inside are linked and what they need from the host.
//
// It reads an image from a registry or from a local docker-save or OCI
// tarball, walks its layers top-down honouring whiteouts, streams every
// regular file whose first bytes are the ELF magic into memory under a cap,
// and classifies it with debug/elf and debug/buildinfo: static or dynamic,
// loader, DT_NEEDED libraries, the highest GLIBC_x.y symbol version it
// needs, musl, and Go build settings such as CGO_ENABLED and the Microsoft
// Go systemcrypto mode that loads libcrypto at run time. Executables are
// also scanned for gzip members holding further ELF files, the way an
// installer such as dropgz carries the binaries it copies onto hosts.
//
// Nothing is ever written to disk except the optional result cache, links
// are never followed, and every input — layer size, decompressed bytes,
// file count, file size, payload size, time — is bounded by Options.
package images
