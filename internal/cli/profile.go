package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes a CPU profile to $KUBEGAP_CPUPROFILE and a heap
// profile to $KUBEGAP_MEMPROFILE, when set, for go tool pprof: the scale
// benchmark profiles the real binary this way. The returned func ends them.
// A profile that cannot be written is reported on stderr and never fails
// the command.
func startProfiles(app *App) (stop func()) {
	getenv := app.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cpuPath, memPath := getenv("KUBEGAP_CPUPROFILE"), getenv("KUBEGAP_MEMPROFILE")
	var cpu *os.File
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err == nil {
			err = pprof.StartCPUProfile(f)
			if err != nil {
				f.Close()
			} else {
				cpu = f
			}
		}
		if err != nil {
			fmt.Fprintf(app.ErrOut, "kubegap: KUBEGAP_CPUPROFILE: %v\n", err)
		}
	}
	return func() {
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if memPath != "" {
			f, err := os.Create(memPath)
			if err == nil {
				runtime.GC() // the heap profile shows live objects as of the last GC
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(app.ErrOut, "kubegap: KUBEGAP_MEMPROFILE: %v\n", err)
			}
		}
	}
}
