package images

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes r for people: a header, then one block per executable
// with its embedded payloads indented under it.
func WriteText(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	ew.printf("image     %s\n", r.Reference)
	ew.printf("platform  %s\n", r.Platform)
	ew.printf("digest    %s\n", r.Digest)
	if r.IndexDigest != "" {
		ew.printf("index     %s\n", r.IndexDigest)
	}
	if r.MediaType != "" {
		ew.printf("manifest  %s\n", r.MediaType)
	}
	ew.printf("read      %d layers, %d files, %s decompressed\n", r.Layers, r.Files, HumanBytes(r.BytesRead))
	for _, j := range r.Java {
		ew.printf("java      %s at %s%s\n", j.Version, j.Home, javaExtra(j.VM, j.Date))
	}
	shipped := "none (no glibc libc.so.6 in the image)"
	if r.ShippedGlibc != "" {
		shipped = r.ShippedGlibc
	}
	ew.printf("glibc     ships %s; %d shared libraries\n", shipped, r.Libraries)
	if needs := r.GlibcNeeds(); len(needs) > 0 {
		top := needs[0]
		v := top.Version
		if v == "" {
			v = "any (unversioned)"
		}
		ew.printf("needs     glibc %s (%s)\n", v, top.Path)
	} else {
		ew.printf("needs     no glibc\n")
	}
	ew.printf("\n%d executables\n", len(r.Executables))
	for i := range r.Executables {
		e := &r.Executables[i]
		ew.printf("\n%s  %s  (%s)\n", e.Path, e.Class, HumanBytes(e.Size))
		writeBinary(ew, "  ", &e.Binary)
		for _, p := range e.Payloads {
			if p.Binary == nil {
				ew.printf("  embedded  %s at 0x%x: %s\n", p.Name, p.Offset, p.Error)
				continue
			}
			ew.printf("  embedded  %s  %s  (gzip at 0x%x, %s)\n", p.Name, p.Binary.Class, p.Offset, HumanBytes(p.Size))
			writeBinary(ew, "            ", p.Binary)
		}
	}
	if len(r.Skipped) > 0 {
		ew.printf("\nskipped\n")
		for _, s := range r.Skipped {
			ew.printf("  %s: %s\n", s.Path, s.Reason)
		}
	}
	if len(r.Notes) > 0 {
		ew.printf("\nnotes\n")
		for _, n := range r.Notes {
			ew.printf("  %s\n", n)
		}
	}
	return ew.err
}

func writeBinary(ew *errWriter, indent string, b *Binary) {
	row := func(k, v string) {
		if v != "" {
			ew.printf("%s%-12s %s\n", indent, k, v)
		}
	}
	row("arch", b.Arch)
	row("interpreter", b.Interpreter)
	row("needed", strings.Join(b.Needed, ", "))
	row("min glibc", b.MinGlibc)
	row("libstdc++", strings.TrimSpace(prefixed("GLIBCXX_", b.MinGlibcxx)+" "+prefixed("CXXABI_", b.MinCxxabi)))
	if g := b.Go; g != nil {
		s := g.Version
		if g.CGO != "" {
			s += " CGO_ENABLED=" + g.CGO
		}
		if g.Experiment != "" {
			s += " GOEXPERIMENT=" + g.Experiment
		}
		if g.BuildMode != "" && g.BuildMode != "exe" {
			s += " -buildmode=" + g.BuildMode
		}
		if g.Toolset != "" {
			s += " toolset=" + g.Toolset
		}
		row("go", s)
		row("go main", g.Path)
	}
	row("runs with", strings.Join(b.HostNeeds, "; "))
}

// HumanBytes formats a byte count with binary units: 1.5 MiB.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// errWriter keeps the first write error so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func prefixed(p, v string) string {
	if v == "" {
		return ""
	}
	return p + v
}

// javaExtra is the JVM variant and build date of a runtime, when known.
func javaExtra(vm, date string) string {
	var parts []string
	if vm != "" {
		parts = append(parts, vm)
	}
	if date != "" {
		parts = append(parts, date)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
