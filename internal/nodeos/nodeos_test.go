package nodeos

import (
	"strings"
	"testing"
	"time"
)

func TestIdentify(t *testing.T) {
	cases := []struct {
		osImage, kernel string
		known           bool
		id, distro      string
		version         string
		libc            Libc
		glibc           string // "" = zero
		eoss            string // "" = zero
	}{
		{"Ubuntu 18.04.6 LTS", "5.4.0-1109-azure", true, "ubuntu-18.04", "Ubuntu", "18.04", LibcGlibc, "2.27", "2023-05-31"},
		{"Ubuntu 20.04.6 LTS", "5.15.0-1079-azure", true, "ubuntu-20.04", "Ubuntu", "20.04", LibcGlibc, "2.31", "2025-05-31"},
		{"Ubuntu 22.04.5 LTS", "5.15.0-1089-azure", true, "ubuntu-22.04", "Ubuntu", "22.04", LibcGlibc, "2.35", "2027-04-30"},
		{"Ubuntu 24.04.1 LTS", "6.8.0-1021-azure", true, "ubuntu-24.04", "Ubuntu", "24.04", LibcGlibc, "2.39", "2029-04-30"},
		{"Ubuntu 22.04 LTS", "", true, "ubuntu-22.04", "Ubuntu", "22.04", LibcGlibc, "2.35", "2027-04-30"},
		{"Debian GNU/Linux 10 (buster)", "4.19.0-26-amd64", true, "debian-10", "Debian", "10", LibcGlibc, "2.28", "2022-09-10"},
		{"Debian GNU/Linux 11 (bullseye)", "5.10.0-32-cloud-amd64", true, "debian-11", "Debian", "11", LibcGlibc, "2.31", "2024-08-14"},
		{"Debian GNU/Linux 12 (bookworm)", "6.1.0-28-cloud-amd64", true, "debian-12", "Debian", "12", LibcGlibc, "2.36", "2026-06-10"},
		{"Debian GNU/Linux 13 (trixie)", "6.12.38+deb13-amd64", true, "debian-13", "Debian", "13", LibcGlibc, "2.41", ""},
		{"Red Hat Enterprise Linux 8.10 (Ootpa)", "4.18.0-553.el8_10.x86_64", true, "rhel-8", "Red Hat Enterprise Linux", "8.10", LibcGlibc, "2.28", "2029-05-31"},
		{"Red Hat Enterprise Linux 9.4 (Plow)", "5.14.0-427.13.1.el9_4.x86_64", true, "rhel-9", "Red Hat Enterprise Linux", "9.4", LibcGlibc, "2.34", "2032-05-31"},
		{"Red Hat Enterprise Linux CoreOS 48.84.202208161501-0 (Ootpa)", "4.18.0-305.57.1.el8_4.x86_64", true, "rhcos-rhel8", "Red Hat Enterprise Linux CoreOS", "48.84.202208161501-0", LibcGlibc, "2.28", ""},
		{"Rocky Linux 9.4 (Blue Onyx)", "5.14.0-427.13.1.el9_4.x86_64", true, "rocky-9", "Rocky Linux", "9.4", LibcGlibc, "2.34", "2032-05-31"},
		{"Rocky Linux 8.9 (Green Obsidian)", "4.18.0-513.5.1.el8_9.x86_64", true, "rocky-8", "Rocky Linux", "8.9", LibcGlibc, "2.28", "2029-05-31"},
		{"AlmaLinux 8.10 (Cerulean Leopard)", "4.18.0-553.el8_10.x86_64", true, "alma-8", "AlmaLinux", "8.10", LibcGlibc, "2.28", "2029-03-01"},
		{"CentOS Linux 7 (Core)", "3.10.0-1160.el7.x86_64", true, "centos-7", "CentOS Linux", "7", LibcGlibc, "2.17", "2024-06-30"},
		{"Oracle Linux Server 8.9", "5.15.0-200.131.27.el8uek.x86_64", true, "oracle-linux-8", "Oracle Linux", "8.9", LibcGlibc, "2.28", "2029-07-31"},
		{"Oracle Linux Server 9.4", "5.15.0-206.153.7.el9uek.x86_64", true, "oracle-linux-9", "Oracle Linux", "9.4", LibcGlibc, "2.34", "2032-06-30"},
		{"Red Hat Enterprise Linux 10.0 (Coughlan)", "6.12.0-55.9.1.el10_0.x86_64", true, "rhel-10", "Red Hat Enterprise Linux", "10.0", LibcGlibc, "2.39", ""},
		{"AlmaLinux 9.3 (Shamrock Pampas Cat)", "5.14.0-362.8.1.el9_3.x86_64", true, "alma-9", "AlmaLinux", "9.3", LibcGlibc, "2.34", "2032-05-31"},
		{"Amazon Linux 2", "5.10.218-208.862.amzn2.x86_64", true, "amazon-linux-2", "Amazon Linux", "2", LibcGlibc, "2.26", "2026-06-30"},
		{"Amazon Linux 2023.6.20250115", "6.1.124-134.200.amzn2023.x86_64", true, "amazon-linux-2023", "Amazon Linux", "2023", LibcGlibc, "2.34", "2027-06-30"},
		{"Amazon Linux 2023", "6.1.124-134.200.amzn2023.x86_64", true, "amazon-linux-2023", "Amazon Linux", "2023", LibcGlibc, "2.34", "2027-06-30"},
		{"Bottlerocket OS 1.20.0 (aws-k8s-1.29)", "6.1.82", true, "bottlerocket", "Bottlerocket", "1.20.0", LibcGlibc, "", ""},
		{"Container-Optimized OS from Google", "6.1.100+", true, "cos", "Container-Optimized OS", "", LibcGlibc, "", ""},
		{"CBL-Mariner/Linux", "5.15.173.1-1.cm2", true, "cbl-mariner-2.0", "CBL-Mariner", "2.0", LibcGlibc, "2.35", "2025-11-30"},
		{"CBL-Mariner/Linux", "", true, "cbl-mariner", "CBL-Mariner", "", LibcGlibc, "", ""},
		{"Azure Linux 3.0", "6.6.150.1-1.azl3", true, "azure-linux-3.0", "Azure Linux", "3.0", LibcGlibc, "2.38", ""},
		{"Microsoft Azure Linux 3.0", "6.6.150.1-1.azl3", true, "azure-linux-3.0", "Azure Linux", "3.0", LibcGlibc, "2.38", ""},
		{"Flatcar Container Linux by Kinvolk 3815.2.0 (Oklo)", "6.1.73-flatcar", true, "flatcar", "Flatcar Container Linux", "3815.2.0", LibcGlibc, "", ""},
		{"Talos (v1.7.0)", "6.6.29-talos", true, "talos", "Talos Linux", "v1.7.0", LibcMusl, "", ""},
		{"Windows Server 2022 Datacenter", "10.0.20348.2762", true, "windows-server-2022", "Windows Server", "2022", LibcNone, "", "2031-10-14"},
		{"Windows Server 2019 Datacenter", "10.0.17763.6293", true, "windows-server-2019", "Windows Server", "2019", LibcNone, "", "2029-01-09"},
		{"Windows Server 2025 Datacenter", "10.0.26100.2894", true, "windows-server", "Windows Server", "2025", LibcNone, "", ""},
		// Unknown: never a guess from a near miss.
		{"", "5.15.0-1079-azure", false, "", "", "", LibcUnknown, "", ""},
		{"Ubuntu 23.10", "6.5.0-9-generic", false, "", "", "", LibcUnknown, "", ""},
		{"Ubuntu 20.04.6 LTS (modified)", "", false, "", "", "", LibcUnknown, "", ""},
		{"Amazon Linux 2024", "", false, "", "", "", LibcUnknown, "", ""},
		{"Totally Real Linux 9000 \x00\xff", "x", false, "", "", "", LibcUnknown, "", ""},
		{strings.Repeat("Ubuntu ", 10000), "", false, "", "", "", LibcUnknown, "", ""},
	}
	for _, c := range cases {
		t.Run(c.osImage+"/"+c.kernel, func(t *testing.T) {
			got := Identify(c.osImage, c.kernel)
			if got.Known != c.known {
				t.Fatalf("Known = %v, want %v (got %+v)", got.Known, c.known, got)
			}
			if got.ID != c.id || got.Distro != c.distro || got.Version != c.version || got.Libc != c.libc {
				t.Errorf("got %s %q %q libc=%q, want %s %q %q libc=%q",
					got.ID, got.Distro, got.Version, got.Libc, c.id, c.distro, c.version, c.libc)
			}
			var want Version
			if c.glibc != "" {
				var err error
				if want, err = ParseVersion(c.glibc); err != nil {
					t.Fatal(err)
				}
			}
			if got.Glibc != want {
				t.Errorf("Glibc = %v, want %v", got.Glibc, want)
			}
			var wantEnd time.Time
			if c.eoss != "" {
				wantEnd, _ = time.Parse(time.DateOnly, c.eoss)
			}
			if !got.EndOfStandardSupport.Equal(wantEnd) {
				t.Errorf("EndOfStandardSupport = %v, want %v", got.EndOfStandardSupport, wantEnd)
			}
			if got.Known && len(got.Sources) == 0 {
				t.Errorf("no sources")
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"2.31", Version{2, 31}, false},
		{"GLIBC_2.34", Version{2, 34}, false},
		{" 2.28.1 ", Version{2, 28}, false},
		{"2", Version{}, true},
		{"", Version{}, true},
		{"GLIBC_PRIVATE", Version{}, true},
		{"a.b", Version{}, true},
		{"2.-1", Version{}, true},
		{"0.0", Version{}, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseVersion(c.in)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, c.wantErr)
			}
			if got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestVersionOrder(t *testing.T) {
	ordered := []Version{{2, 9}, {2, 26}, {2, 31}, {2, 34}, {2, 100}, {3, 0}}
	for i := range ordered {
		for j := range ordered {
			want := cmpInt(i, j)
			if got := ordered[i].Compare(ordered[j]); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
			if got := ordered[i].Less(ordered[j]); got != (i < j) {
				t.Errorf("%v.Less(%v) = %v", ordered[i], ordered[j], got)
			}
		}
	}
	if (Version{}).String() != "unknown" || (Version{2, 31}).String() != "2.31" {
		t.Errorf("String: %q %q", Version{}.String(), Version{2, 31}.String())
	}
}

// TestTable validates the embedded data file: it parses strictly, every
// entry has sources and evidence, and every entry is reachable (no earlier
// entry shadows it for a sample osImage built from it).
func TestTable(t *testing.T) {
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 20 {
		t.Fatalf("only %d entries", len(entries))
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.OSImage, "^") {
			t.Errorf("%s: osImage pattern is not anchored", e.ID)
		}
		for _, s := range e.Sources {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q is not an https URL", e.ID, s)
			}
		}
		if e.Libc == LibcGlibc && e.Glibc == "" && e.Note == "" {
			t.Errorf("%s: glibc unknown without a note saying why", e.ID)
		}
	}
}

func TestParseTableRejects(t *testing.T) {
	cases := map[string]string{
		"empty":        `entries: []`,
		"unknownField": `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [https://x.example], colour: red}]`,
		"badRegexp":    `entries: [{id: a, distro: A, version: "1", osImage: "^(A$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"noSources":    `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "2026-12-01"}]`,
		"badEvidence":  `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: vibes, checked: "2026-12-01", sources: [https://x.example]}]`,
		"badLibc":      `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: bsd, evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"muslGlibc":    `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: musl, glibc: "2.3", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"badGlibc":     `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, glibc: two, evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"badDate":      `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, endOfStandardSupport: "May 2025", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"endsReversed": `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, endOfStandardSupport: "2025-01-01", endOfExtendedSupport: "2024-01-01", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"memory":       `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: memory, checked: "2026-12-01", sources: [https://x.example]}]`,
		"uncertain":    `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: uncertain, checked: "2026-12-01", sources: [https://x.example]}]`,
		"noChecked":    `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, sources: [https://x.example]}]`,
		"badChecked":   `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "Dec 2026", sources: [https://x.example]}]`,
		"httpSource":   `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [http://x.example]}]`,
		"duplicate": `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [https://x.example]},
		                       {id: a, distro: A, version: "1", osImage: "^B$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := parseTable([]byte(doc)); err == nil {
				t.Errorf("accepted %s", doc)
			}
		})
	}
}

// TestParseTableAcceptsMinimal is the baseline the rejection cases each
// break in one place, so a rejection cannot pass for an unrelated reason.
func TestParseTableAcceptsMinimal(t *testing.T) {
	doc := `entries: [{id: a, distro: A, version: "1", osImage: "^A$", libc: glibc, evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`
	if _, err := parseTable([]byte(doc)); err != nil {
		t.Fatalf("minimal valid table refused: %v", err)
	}
}
