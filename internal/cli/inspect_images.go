package cli

import (
	"context"
	"fmt"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/images"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// inspectHostImages pulls and inspects the images that install binaries on
// hosts, for --inspect-images. An image that cannot be inspected is noted on
// stderr and left to the shipped facts; it never ends the audit.
func inspectHostImages(ctx context.Context, app *App, s *snapshot.Snapshot, quiet bool) map[string]checks.ImageFacts {
	hosts, err := checks.HostBinaryImages(s)
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
	if len(refs) == 0 {
		return nil
	}
	if !quiet {
		fmt.Fprintf(app.ErrOut, "inspecting %d image(s) that install binaries on hosts\n", len(hosts))
	}
	facts := images.InspectForAudit(ctx, refs, images.Options{})
	if !quiet {
		for _, f := range facts {
			if f.Err != "" {
				fmt.Fprintf(app.ErrOut, "kubegap: could not inspect %s: %s (falling back to shipped facts)\n", f.Image, f.Err)
			}
		}
	}
	return facts
}
