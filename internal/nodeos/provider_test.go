package nodeos

import (
	"testing"
	"time"
)

func TestProviderOf(t *testing.T) {
	aksLabels := map[string]string{"kubernetes.azure.com/cluster": "MC_rg_c_westeurope", "agentpool": "np1"}
	eksLabels := map[string]string{"eks.amazonaws.com/nodegroup": "ng-1"}
	gkeLabels := map[string]string{"cloud.google.com/gke-nodepool": "default-pool"}
	cases := []struct {
		name       string
		providerID string
		labels     map[string]string
		want       Provider
	}{
		{"aks", "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-np1-vmss/virtualMachines/0", aksLabels, ProviderAKS},
		{"eks managed node group", "aws:///eu-west-1a/i-0123456789abcdef0", eksLabels, ProviderEKS},
		{"gke", "gce://proj/us-central1-a/gke-c-default-pool-1", gkeLabels, ProviderGKE},
		// Self-managed on the same clouds: the providerID alone is not the service.
		{"self-managed on azure", "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1", map[string]string{"kubernetes.io/os": "linux"}, ProviderUnknown},
		{"karpenter or self-managed on aws", "aws:///eu-west-1a/i-0123", map[string]string{"karpenter.sh/nodepool": "default"}, ProviderUnknown},
		// A service's label on another cloud's node is not that service.
		{"aks label on aws node", "aws:///eu-west-1a/i-0123", aksLabels, ProviderUnknown},
		{"no providerID", "", aksLabels, ProviderUnknown},
		{"kind", "kind://docker/kind/kind-control-plane", nil, ProviderUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ProviderOf(c.providerID, c.labels); got != c.want {
				t.Errorf("ProviderOf = %q, want %q", got, c.want)
			}
		})
	}
}

// TestProviderWindow goes from what a node reports (osImage, kernel) through
// Identify to the window, the way a check uses it.
func TestProviderWindow(t *testing.T) {
	cases := []struct {
		provider        Provider
		osImage, kernel string
		found           bool
		end, removed    string // "" = zero
	}{
		{ProviderAKS, "Ubuntu 18.04.6 LTS", "5.4.0-1109-azure", true, "2025-06-17", "2025-06-17"},
		{ProviderAKS, "Ubuntu 20.04.6 LTS", "5.15.0-1079-azure", true, "2027-03-17", "2027-03-17"},
		{ProviderAKS, "Ubuntu 22.04.5 LTS", "5.15.0-1089-azure", true, "2027-06-30", "2028-04-30"},
		{ProviderAKS, "CBL-Mariner/Linux", "5.15.173.1-1.cm2", true, "2025-11-30", "2026-03-31"},
		{ProviderAKS, "Windows Server 2019 Datacenter", "10.0.17763.6893", true, "2026-03-01", "2027-04-01"},
		{ProviderAKS, "Windows Server 2022 Datacenter", "10.0.20348.2762", true, "2028-06-30", "2029-06-30"},
		{ProviderAKS, "Flatcar Container Linux by Kinvolk 4081.2.0 (Oklo)", "6.6.54-flatcar", true, "2026-06-08", "2026-09-08"},
		{ProviderEKS, "Amazon Linux 2", "5.10.218-208.862.amzn2.x86_64", true, "2025-11-26", ""},
		// Not tabled: unknown, never a default.
		{ProviderAKS, "Ubuntu 24.04.1 LTS", "6.8.0-1021-azure", false, "", ""},
		{ProviderEKS, "Amazon Linux 2023.6.20250115", "6.1.124-134.200.amzn2023.x86_64", false, "", ""},
		{ProviderGKE, "Ubuntu 20.04.6 LTS", "5.15.0-1079-gke", false, "", ""},
		{ProviderUnknown, "Ubuntu 20.04.6 LTS", "5.15.0-1079-azure", false, "", ""},
		{ProviderEKS, "Ubuntu 18.04.6 LTS", "5.4.0-1109-aws", false, "", ""},
	}
	for _, c := range cases {
		t.Run(string(c.provider)+"/"+c.osImage, func(t *testing.T) {
			info := Identify(c.osImage, c.kernel)
			if !info.Known {
				t.Fatalf("fixture osImage %q is not in the OS table", c.osImage)
			}
			w, ok := ProviderWindow(c.provider, info.Distro, info.Version)
			if ok != c.found {
				t.Fatalf("found = %v, want %v (window %+v)", ok, c.found, w)
			}
			if !ok {
				return
			}
			if !w.EndOfSupport.Equal(day(t, c.end)) || !w.ImagesRemoved.Equal(day(t, c.removed)) {
				t.Errorf("window %v / %v, want %s / %s", w.EndOfSupport, w.ImagesRemoved, c.end, c.removed)
			}
			if len(w.Sources) == 0 {
				t.Error("no sources")
			}
		})
	}
}

func day(t *testing.T, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestProviderWindowsReachable: a window whose distro no OS table entry
// reports could never be found by ProviderWindow.
func TestProviderWindowsReachable(t *testing.T) {
	ws, err := ProviderWindows()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		ok := false
		for _, e := range entries {
			// An entry without a fixed version takes it from the osImage.
			if e.Distro == w.Distro && (w.Version == "" || e.Version == "" || e.Version == w.Version) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("window %s %s %s matches no OS table entry", w.Provider, w.Distro, w.Version)
		}
	}
}

func TestParseWindowsRejects(t *testing.T) {
	const ok = `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`
	if _, err := parseWindows([]byte(ok)); err != nil {
		t.Fatalf("baseline refused: %v", err)
	}
	cases := map[string]string{
		"empty":        `windows: []`,
		"unknownField": `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [https://x.example], colour: red}]`,
		"badProvider":  `windows: [{provider: ibm, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"noDistro":     `windows: [{provider: aks, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"memory":       `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: memory, checked: "2026-12-01", sources: [https://x.example]}]`,
		"uncertain":    `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: uncertain, checked: "2026-12-01", sources: [https://x.example]}]`,
		"noSources":    `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01"}]`,
		"noChecked":    `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, sources: [https://x.example]}]`,
		"noEnd":        `windows: [{provider: aks, distro: Ubuntu, version: "20.04", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"badEnd":       `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "March 2027", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"removedFirst": `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", imagesRemoved: "2027-01-01", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"duplicate":    `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}, {provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-18", evidence: verified, checked: "2026-12-01", sources: [https://x.example]}]`,
		"httpSource":   `windows: [{provider: aks, distro: Ubuntu, version: "20.04", endOfSupport: "2027-03-17", evidence: verified, checked: "2026-12-01", sources: [http://x.example]}]`,
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := parseWindows([]byte(doc)); err == nil {
				t.Errorf("accepted %s", doc)
			}
		})
	}
}
