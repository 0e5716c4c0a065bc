// Package images inspects container images for what manifests cannot show:
// how the executables inside are linked and what they need from the host.
//
// It reads an image from a registry, from a docker-save or OCI layout
// tarball (gzip-compressed or not) or from an OCI layout directory, walks
// its layers (gzip, zstd or plain tar) top-down honouring whiteouts, and
// streams every regular file whose first bytes are the ELF magic through a
// fixed window, keeping only its headers, its dynamic section and the
// tables it points to, and its Go build information (stream.go,
// elfparse.go). From those it classifies the file: static, static-pie or
// dynamic, loader, DT_NEEDED libraries, the highest GLIBC_, GLIBCXX_ and
// CXXABI_ versions it needs, musl, and Go build settings such as
// CGO_ENABLED and the Microsoft Go systemcrypto mode that loads libcrypto
// at run time. The same pass finds gzip members holding further ELF files,
// gzip members or tar archives, the way an installer such as dropgz
// carries the binaries it copies onto hosts, and follows them to a bounded
// depth.
//
// Nothing is ever written to disk except the optional result cache, links
// are never followed, and every input — layer size, decompressed bytes,
// file count, bytes kept per file, payload bytes and depth, time — is
// bounded by Options.
package images
