package cli

import (
	"context"
	"fmt"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks/runtime"
	"github.com/kubegap/kubegap/internal/images"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// inspectHostImages pulls and inspects, for --inspect-images, the images
// that install binaries on hosts and, when a selected check needs them,
// every image pods and workload templates run: their manifests for
// image-manifest-compat, their files too for jvm-cgroup-compat. An image
// that cannot be inspected is noted on stderr; it never ends the audit.
func inspectHostImages(ctx context.Context, app *App, s *snapshot.Snapshot, selected []check.Check, quiet bool) map[string]check.ImageFacts {
	hosts, err := runtime.HostBinaryImages(s)
	if err != nil {
		fmt.Fprintf(app.ErrOut, "kubegap: --inspect-images: %v\n", err)
		return nil
	}
	var refs []images.ImageRef
	for _, h := range hosts {
		for _, p := range h.Platforms {
			refs = append(refs, images.ImageRef{Reference: h.Image, Platform: p})
		}
	}
	ids := make([]string, len(selected))
	for i, c := range selected {
		ids[i] = c.ID
	}
	var workload []runtime.HostImage
	if manifests, files := runtime.WorkloadImageNeeds(ids); manifests {
		workload = runtime.WorkloadImages(s)
		for _, w := range workload {
			for _, p := range w.Platforms {
				refs = append(refs, images.ImageRef{Reference: w.Image, Platform: p, ManifestOnly: !files})
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	if !quiet {
		fmt.Fprintf(app.ErrOut, "inspecting %d image(s) that install binaries on hosts and %d workload image(s)\n", len(hosts), len(workload))
	}
	facts := images.InspectForAudit(ctx, refs, images.Options{})
	if !quiet {
		for _, f := range facts {
			if f.Err != "" {
				fmt.Fprintf(app.ErrOut, "kubegap: could not inspect %s: %s\n", f.Image, f.Err)
			}
		}
	}
	return facts
}
