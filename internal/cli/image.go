package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/images"
)

func newImageCommand(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Inspect container images for how their executables are linked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withCode(ExitError, errors.New("missing subcommand: try 'kubegap image inspect REF'"))
		},
	}
	cmd.AddCommand(newImageInspectCommand(app))
	return cmd
}

// imageInspectFlags holds the flags of 'image inspect'.
type imageInspectFlags struct {
	tarball  string
	platform string
	output   string
	opts     images.Options
}

func newImageInspectCommand(app *App) *cobra.Command {
	f := &imageInspectFlags{}
	f.opts = images.Options{
		MaxLayerBytes:   images.DefaultMaxLayerBytes,
		MaxImageBytes:   images.DefaultMaxImageBytes,
		MaxFiles:        images.DefaultMaxFiles,
		MaxFileBytes:    images.DefaultMaxFileBytes,
		MaxPayloadBytes: images.DefaultMaxPayloadBytes,
		MaxPayloads:     images.DefaultMaxPayloads,
		MaxPayloadDepth: images.DefaultMaxPayloadDepth,
		Timeout:         images.DefaultTimeout,
	}
	cmd := &cobra.Command{
		Use:   "inspect REF | --tarball PATH",
		Short: "List an image's executables: linkage, loader, libraries, minimum glibc and libstdc++, Go settings, embedded payloads",
		Long: `Reads an image from its registry (anonymously, or with your docker config's
credentials), from a 'docker save' or OCI layout tarball (gzip-compressed or
not) or from an OCI layout directory, walks its layers (gzip, zstd or
uncompressed) honouring whiteouts, and reports every ELF executable: static,
static-pie or dynamic, its loader, the libraries it needs, the highest
GLIBC_x.y, GLIBCXX_x.y.z and CXXABI_x.y versions it needs, musl, Go build
settings (CGO_ENABLED, GOEXPERIMENT, Microsoft Go systemcrypto), and ELF
files embedded in it as gzip streams — also inside nested gzip members and
tar archives — as an installer such as dropgz carries the binaries it
copies onto hosts.

Files are streamed, not read whole. Nothing is written to disk and links are
never followed. Every input is bounded by the --max-* flags and --timeout.`,
		Example: `  kubegap image inspect mcr.microsoft.com/containernetworking/azure-cni:v1.7.16-0
  kubegap image inspect --platform linux/arm64 -o json registry.k8s.io/pause:3.10
  docker save myimage:tag -o image.tar && kubegap image inspect --tarball image.tar
  docker save myimage:tag | gzip > image.tar.gz && kubegap image inspect --tarball image.tar.gz
  kubegap image inspect --tarball ./oci-layout-dir --platform linux/arm64`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case f.tarball != "" && len(args) > 0:
				return withCode(ExitError, errors.New("give an image reference or --tarball, not both"))
			case f.tarball == "" && len(args) != 1:
				return withCode(ExitError, errors.New("give one image reference, or --tarball PATH"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.output != "text" && f.output != "json" {
				return withCode(ExitError, fmt.Errorf("-o %q: want text or json", f.output))
			}
			var (
				r   *images.Report
				err error
			)
			if f.tarball != "" {
				r, err = images.InspectTarball(cmd.Context(), f.tarball, f.platform, f.opts)
			} else {
				r, err = images.InspectReference(cmd.Context(), args[0], f.platform, f.opts)
			}
			if err != nil {
				return withCode(ExitError, err)
			}
			if f.output == "json" {
				enc := json.NewEncoder(app.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			return images.WriteText(app.Out, r)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.tarball, "tarball", "", "read the image from a 'docker save' or OCI layout tarball (gzip-compressed or not) or an OCI layout directory instead of a registry")
	fl.StringVar(&f.platform, "platform", images.DefaultPlatform, "platform to pick from a multi-platform image, os/arch[/variant]")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	fl.Var((*byteSize)(&f.opts.MaxLayerBytes), "max-layer-bytes", "largest compressed layer to read (e.g. 512Mi, 2Gi)")
	fl.Var((*byteSize)(&f.opts.MaxImageBytes), "max-image-bytes", "most decompressed bytes to read per image; stops decompression bombs")
	fl.IntVar(&f.opts.MaxFiles, "max-files", f.opts.MaxFiles, "most tar entries to walk per image")
	fl.Var((*byteSize)(&f.opts.MaxFileBytes), "max-file-bytes", "most bytes of one ELF file kept in memory (its headers and tables); a file whose tables lie further in is listed as skipped")
	fl.Var((*byteSize)(&f.opts.MaxPayloadBytes), "max-payload-bytes", "most bytes the embedded payloads of one file may decompress to, all nesting levels together")
	fl.IntVar(&f.opts.MaxPayloads, "max-payloads", f.opts.MaxPayloads, "most embedded payloads to analyse per executable")
	fl.IntVar(&f.opts.MaxPayloadDepth, "max-payload-depth", f.opts.MaxPayloadDepth, "deepest nesting of payloads followed (a gzip member is 1, a tar inside it 2, ...)")
	fl.DurationVar(&f.opts.Timeout, "timeout", f.opts.Timeout, "time allowed for the whole image, pull included")
	return cmd
}

// byteSize is an int64 flag that takes plain bytes or a binary (Ki, Mi,
// Gi, Ti) or decimal (k, M, G, T) suffix.
type byteSize int64

func (b *byteSize) String() string { return formatByteSize(int64(*b)) }

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

var byteSuffixes = []struct {
	suffix string
	mult   int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

func parseByteSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "B")
	mult := int64(1)
	for _, u := range byteSuffixes {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = num, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q: want a positive size such as 1048576, 512Mi or 2Gi", s)
	}
	return n * mult, nil
}

func formatByteSize(n int64) string {
	for i := 3; i >= 0; i-- {
		u := byteSuffixes[i]
		if n >= u.mult && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
