// Command images measures `kubegap image inspect --tarball` against plain
// decompression of the same layer: gunzip (zlib, C) and Go's
// compress/gzip. It builds a docker-save tarball holding one gzipped layer
// of real ELF files copied from this machine (Debian's /usr/bin and
// /usr/lib, the Go toolchain), then runs the three tools interleaved,
// round after round, and prints a table of wall time, throughput and peak
// RSS whose last line is "ratio: X", kubegap's throughput over gunzip's.
//
//	go run ./bench/images -kubegap BIN [-layer-mb 200] [-rounds 3] [-dir DIR]
//
// bench/images/run.sh builds kubegap and runs this. The tarball is kept
// in DIR and reused while the file list is unchanged.
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "go-gunzip" {
		// The re-executed child: decode with compress/gzip, as kubegap did
		// before it switched decoders, and nothing else.
		if err := goGunzip(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	kubegap := flag.String("kubegap", "", "kubegap binary to measure (required)")
	layerMB := flag.Int("layer-mb", 200, "smallest size of the gzipped layer, in MB")
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "kubegap-bench-images"), "where the tarball is built and kept")
	flag.Parse()
	if *kubegap == "" || *rounds < 1 || *layerMB < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*kubegap, *dir, int64(*layerMB)*1e6, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/images:", err)
		os.Exit(1)
	}
}

// roots are where real ELF files come from, in this order.
func roots() []string {
	rs := []string{"/usr/bin"}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		g := strings.TrimSpace(string(out))
		rs = append(rs, filepath.Join(g, "bin"), filepath.Join(g, "pkg", "tool"))
	}
	return append(rs, "/usr/lib/x86_64-linux-gnu", "/usr/lib")
}

type source struct {
	path string
	size int64
}

// pickFiles lists ELF files until their total reaches want bytes.
func pickFiles(want int64) ([]source, int64, error) {
	var out []source
	var total int64
	seen := map[string]bool{}
	for _, root := range roots() {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || total >= want {
				if d != nil && d.IsDir() && total >= want {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || seen[p] {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() < 64 {
				return nil
			}
			if !isELF(p) {
				return nil
			}
			seen[p] = true
			out = append(out, source{p, info.Size()})
			total += info.Size()
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == "\x7fELF"
}

// build writes DIR/layer.tar.gz and DIR/image.tar (docker save format)
// and returns the layer's uncompressed size. gzip -6, the default of
// docker and of the gzip CLI, compresses.
func build(dir string, files []source) (int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	layerPath := filepath.Join(dir, "layer.tar.gz")
	out, err := os.Create(layerPath)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	gz := exec.Command("gzip", "-6", "-n", "-c")
	gz.Stdout, gz.Stderr = out, os.Stderr
	gzIn, err := gz.StdinPipe()
	if err != nil {
		return 0, err
	}
	if err := gz.Start(); err != nil {
		return 0, err
	}
	diff, counter := sha256.New(), &countWriter{}
	bw := bufio.NewWriterSize(gzIn, 1<<20)
	tw := tar.NewWriter(io.MultiWriter(bw, diff, counter))
	for i, s := range files {
		// Numbered directories keep same-named files (the Go tool dir and
		// /usr/bin share names) apart.
		hdr := &tar.Header{Name: fmt.Sprintf("r%d%s", i%7, s.path), Mode: 0o755, Size: s.size, Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if err := copyFile(tw, hdr, s.path); err != nil {
			return 0, err
		}
	}
	if err := tw.Close(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	if err := gzIn.Close(); err != nil {
		return 0, err
	}
	if err := gz.Wait(); err != nil {
		return 0, fmt.Errorf("gzip: %w", err)
	}
	digest, err := fileSHA256(layerPath)
	if err != nil {
		return 0, err
	}
	return counter.n, writeDockerSave(dir, layerPath, digest, hex.EncodeToString(diff.Sum(nil)))
}

func copyFile(tw *tar.Writer, hdr *tar.Header, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("%s changed while copying: %w", p, err)
	}
	return nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeDockerSave writes image.tar: manifest.json, the config and the
// layer, as `docker save` lays them out.
func writeDockerSave(dir, layerPath, digest, diffID string) error {
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + diffID}},
		"config": map[string]any{},
	})
	cfgSum := sha256.Sum256(config)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	layerName := digest + "/layer.tar.gz"
	manifest, _ := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": []string{"bench:latest"}, "Layers": []string{layerName}}})
	f, err := os.Create(filepath.Join(dir, "image.tar"))
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		data []byte
	}{{"manifest.json", manifest}, {cfgName, config}} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	info, err := os.Stat(layerPath)
	if err != nil {
		return err
	}
	if err := copyFile(tw, &tar.Header{Name: layerName, Mode: 0o644, Size: info.Size(), Typeflag: tar.TypeReg}, layerPath); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

func goGunzip(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}

// measurement is one run of one tool.
type measurement struct {
	wall  time.Duration
	cpu   time.Duration // user + system
	rssKB int64
}

// measure runs cmd with stdout to out (nil: discarded) and returns its
// wall time and peak RSS from the kernel's rusage.
func measure(out io.Writer, name string, args ...string) (measurement, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return measurement{}, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	m := measurement{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rssKB = ru.Maxrss
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return m, nil
}

func run(kubegap, dir string, layerWant int64, rounds int) error {
	// gzip -6 shrinks these files to about 0.37 of their size; pick
	// enough, then check the layer really is as large as asked.
	files, total, err := pickFiles(layerWant * 3)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return errors.New("no ELF files found under " + strings.Join(roots(), ", "))
	}
	stamp := fmt.Sprintf("%d files, %d bytes, first %s, last %s", len(files), total, files[0].path, files[len(files)-1].path)
	stampPath := filepath.Join(dir, "stamp")
	var tarBytes int64
	if old, err := os.ReadFile(stampPath); err == nil && strings.HasPrefix(string(old), stamp+"\n") {
		fmt.Sscanf(strings.TrimPrefix(string(old), stamp+"\n"), "%d", &tarBytes)
	} else {
		fmt.Fprintf(os.Stderr, "building the layer: %d ELF files, %d MB ...\n", len(files), total/1e6)
		if tarBytes, err = build(dir, files); err != nil {
			return err
		}
		if err := os.WriteFile(stampPath, fmt.Appendf(nil, "%s\n%d\n", stamp, tarBytes), 0o644); err != nil {
			return err
		}
	}
	layer := filepath.Join(dir, "layer.tar.gz")
	info, err := os.Stat(layer)
	if err != nil {
		return err
	}
	if info.Size() < layerWant {
		return fmt.Errorf("the layer is %d MB, less than the %d MB asked for: this machine has too few ELF files", info.Size()/1e6, layerWant/1e6)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	image := filepath.Join(dir, "image.tar")
	tools := []struct {
		name string
		argv []string
	}{
		{"gunzip -c (zlib)", []string{"gunzip", "-c", layer}},
		{"Go compress/gzip", []string{self, "go-gunzip", layer}},
		{"kubegap image inspect", []string{kubegap, "image", "inspect", "--tarball", image, "-o", "json"}},
	}
	results := make([][]measurement, len(tools))
	var report []byte
	for r := 0; r < rounds; r++ {
		for i, t := range tools {
			var out io.Writer
			var buf strings.Builder
			if i == 2 && r == 0 {
				out = &buf
			}
			m, err := measure(out, t.argv[0], t.argv[1:]...)
			if err != nil {
				return err
			}
			results[i] = append(results[i], m)
			if out != nil {
				report = []byte(buf.String())
			}
		}
	}
	var rep struct {
		Executables []json.RawMessage `json:"executables"`
		Libraries   int               `json:"libraries"`
		Skipped     []json.RawMessage `json:"skipped"`
		BytesRead   int64             `json:"bytesRead"`
	}
	if err := json.Unmarshal(report, &rep); err != nil {
		return fmt.Errorf("kubegap's report: %w", err)
	}
	fmt.Printf("layer: %d ELF files; %.1f MB gzipped, %.1f MB uncompressed; kubegap read %d executables, %d shared libraries, %d skipped\n",
		len(files), float64(info.Size())/1e6, float64(tarBytes)/1e6, len(rep.Executables), rep.Libraries, len(rep.Skipped))
	fmt.Printf("rounds: %d, interleaved; throughput is uncompressed MB per second of the median run\n\n", rounds)
	fmt.Printf("| %-22s | %8s | %-20s | %8s | %10s | %11s |\n", "tool", "median s", "runs s", "MB/s", "median CPU s", "peak RSS MB")
	fmt.Printf("|%s|%s|%s|%s|%s|%s|\n", strings.Repeat("-", 24), strings.Repeat("-", 10), strings.Repeat("-", 22), strings.Repeat("-", 10), strings.Repeat("-", 14), strings.Repeat("-", 13))
	medians := make([]time.Duration, len(tools))
	cpus := make([]time.Duration, len(tools))
	for i, t := range tools {
		var walls, cpu []time.Duration
		var rss int64
		var runs []string
		for _, m := range results[i] {
			walls = append(walls, m.wall)
			cpu = append(cpu, m.cpu)
			rss = max(rss, m.rssKB)
			runs = append(runs, fmt.Sprintf("%.2f", m.wall.Seconds()))
		}
		slices.Sort(walls)
		slices.Sort(cpu)
		medians[i], cpus[i] = walls[len(walls)/2], cpu[len(cpu)/2]
		fmt.Printf("| %-22s | %8.2f | %-20s | %8.1f | %12.2f | %11.1f |\n", t.name, medians[i].Seconds(), strings.Join(runs, " "),
			float64(tarBytes)/1e6/medians[i].Seconds(), cpus[i].Seconds(), float64(rss)/1024)
	}
	// On a shared machine wall time also measures the neighbours; CPU time
	// is printed alongside so a reader can tell the two apart.
	fmt.Printf("\ncpu ratio: %.2f (gunzip CPU s / kubegap CPU s)\n", cpus[0].Seconds()/cpus[2].Seconds())
	fmt.Printf("ratio: %.2f\n", medians[0].Seconds()/medians[2].Seconds())
	return nil
}
