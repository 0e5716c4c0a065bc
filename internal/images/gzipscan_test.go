package images

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestScanEmbedded(t *testing.T) {
	fx := fixtures(t)
	noName := gzipMember("", fx.cDynamic)
	text := gzipMember("sum.txt", []byte("abc  azure-vnet\n"))
	corrupt := gzipMember("broken", fx.cDynamic)
	corrupt = corrupt[:len(corrupt)/2]
	cases := []struct {
		name      string
		data      []byte
		opts      Options
		want      []string // payload names, in order
		wantErr   []bool   // per payload: Error set
		wantGlibc string   // MinGlibc of the first payload
		wantNote  string
	}{
		{name: "installer", data: fx.installer, want: []string{"azure-vnet"}, wantErr: []bool{false}, wantGlibc: fx.cDynamicNeed},
		{name: "no FNAME", data: slices.Concat([]byte("pad"), noName), want: []string{"gzip@0x3"}, wantErr: []bool{false}, wantGlibc: fx.cDynamicNeed},
		{name: "non-ELF member ignored", data: slices.Concat(fx.goStatic, text), want: nil},
		{name: "two payloads", data: slices.Concat(text, gzipMember("a", fx.cStatic), gzipMember("b", fx.cDynamic)), want: []string{"a", "b"}, wantErr: []bool{false, false}},
		{name: "over payload cap", data: fx.installer, opts: Options{MaxPayloadBytes: 1024}, want: []string{"azure-vnet"}, wantErr: []bool{true}},
		{name: "corrupt stream", data: slices.Concat([]byte("xx"), corrupt), want: []string{"broken"}, wantErr: []bool{true}},
		{name: "payload count cap", data: slices.Concat(gzipMember("a", fx.cStatic), gzipMember("b", fx.cStatic)), opts: Options{MaxPayloads: 1}, want: []string{"a"}, wantErr: []bool{false}, wantNote: "more than 1"},
		{name: "many fake headers", data: bytes.Repeat([]byte{0x1f, 0x8b, 0x08, 0x00}, maxProbes+10), want: nil, wantNote: "stopped scanning"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, notes, err := ScanEmbedded(context.Background(), c.data, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, c.want) {
				t.Fatalf("payloads = %v, want %v", names, c.want)
			}
			for i, p := range ps {
				if (p.Error != "") != c.wantErr[i] {
					t.Errorf("payload %s: Error = %q, want error %v", p.Name, p.Error, c.wantErr[i])
				}
				if p.Error == "" && p.Binary == nil {
					t.Errorf("payload %s: no analysis and no error", p.Name)
				}
			}
			if c.wantGlibc != "" && (ps[0].Binary == nil || ps[0].Binary.MinGlibc != c.wantGlibc) {
				t.Errorf("payload MinGlibc = %+v, want %s", ps[0].Binary, c.wantGlibc)
			}
			if c.wantNote != "" && !strings.Contains(fmt.Sprint(notes), c.wantNote) {
				t.Errorf("notes = %v, want one containing %q", notes, c.wantNote)
			}
		})
	}
}

func TestScanEmbeddedPayloadSizeAndOffset(t *testing.T) {
	fx := fixtures(t)
	ps, _, err := ScanEmbedded(context.Background(), fx.installer, Options{})
	if err != nil || len(ps) != 1 {
		t.Fatalf("ScanEmbedded = %v, %v; want one payload", ps, err)
	}
	if ps[0].Offset != int64(len(fx.goStatic)) {
		t.Errorf("Offset = %d, want %d (appended after the outer binary)", ps[0].Offset, len(fx.goStatic))
	}
	if ps[0].Size != int64(len(fx.cDynamic)) {
		t.Errorf("Size = %d, want %d", ps[0].Size, len(fx.cDynamic))
	}
}

func TestScanEmbeddedCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := ScanEmbedded(ctx, bytes.Repeat([]byte{0x1f, 0x8b, 0x08, 0x00}, 1000), Options{})
	if err == nil {
		t.Error("ScanEmbedded on a cancelled context returned no error")
	}
}

// tarOf is a tar archive of the entries, for payload tests.
func tarOf(t *testing.T, es ...entry) []byte { return tarBytes(t, es...) }

// TestScanEmbeddedNested: payloads inside payloads — gzip in gzip, a tar
// in a gzip member, a tar.gz in a tar — are followed to
// MaxPayloadDepth and within MaxPayloadBytes in all.
func TestScanEmbeddedNested(t *testing.T) {
	fx := fixtures(t)
	bundle := tarOf(t, file("opt/cni/bin/azure-vnet", fx.cDynamic), file("README", []byte("not a program")), file("opt/cni/bin/musl", fx.muslDynamic))
	inner := tarOf(t, file("bin/deep", fx.cDynamic))
	outerTar := tarOf(t, file("inner.tar.gz", gzipMember("", inner)))
	zeros := tarOf(t, file("zeros", make([]byte, 64<<20)))
	cases := []struct {
		name    string
		data    []byte
		opts    Options
		want    map[string]string // payload name -> MinGlibc ("" for none), or "error:TEXT"
		maxSize int64
	}{
		{name: "gzip in gzip", data: slices.Concat(fx.goStatic, gzipMember("bundle.gz", gzipMember("azure-vnet", fx.cDynamic))),
			want: map[string]string{"bundle.gz!azure-vnet": fx.cDynamicNeed}},
		{name: "tar in gzip", data: slices.Concat(fx.goStatic, gzipMember("plugins.tar", bundle)),
			want: map[string]string{"plugins.tar!opt/cni/bin/azure-vnet": fx.cDynamicNeed, "plugins.tar!opt/cni/bin/musl": ""}},
		{name: "tar.gz in tar in gzip", data: slices.Concat(fx.goStatic, gzipMember("outer.tar", outerTar)),
			want: map[string]string{"outer.tar!inner.tar.gz!gzip!bin/deep": fx.cDynamicNeed}},
		{name: "tar.gz in tar in gzip, too deep", data: slices.Concat(fx.goStatic, gzipMember("outer.tar", outerTar)), opts: Options{MaxPayloadDepth: 2},
			want: map[string]string{"outer.tar!inner.tar.gz": "error:nested deeper than 2 levels"}},
		{name: "bomb in a payload", data: slices.Concat(fx.goStatic, gzipMember("zeros.tar", zeros)), opts: Options{MaxPayloadBytes: 1 << 20},
			want: map[string]string{"zeros.tar": "error:more than 1048576 bytes"}},
		{name: "bomb in gzip in gzip", data: slices.Concat(fx.goStatic, gzipMember("z.gz", gzipMember("", zeros))), opts: Options{MaxPayloadBytes: 1 << 20},
			want: map[string]string{"z.gz!gzip": "error:more than 1048576 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ps []Payload
			var err error
			alloc := allocDuring(func() { ps, _, err = ScanEmbedded(context.Background(), c.data, c.opts) })
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range ps {
				switch {
				case p.Error != "":
					got[p.Name] = "error:" + p.Error
				case p.Binary != nil:
					got[p.Name] = p.Binary.MinGlibc
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("payloads %v, want %v", got, c.want)
			}
			for n, w := range c.want {
				g, ok := got[n]
				if !ok || (strings.HasPrefix(w, "error:") && !strings.Contains(g, strings.TrimPrefix(w, "error:"))) || (!strings.HasPrefix(w, "error:") && g != w) {
					t.Errorf("payload %s = %q, want %q (all: %v)", n, g, w, got)
				}
			}
			if alloc > 48<<20 {
				t.Errorf("allocated %d MiB; nested payloads must stream", alloc>>20)
			}
		})
	}
}
