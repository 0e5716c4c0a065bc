package runtime

import "github.com/kubegap/kubegap/internal/check"

// Checks lists the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		calicoIPAMBlocksCheck(),
		containerdChainedCNICheck(),
		dataplaneNodeCompatCheck(),
		dockerSocketCouplingCheck(),
		hostBinaryGlibcCheck(),
		imageManifestCompatCheck(),
		jvmCgroupCompatCheck(),
		kernelCNIKnownBadCheck(),
		podSandboxFailuresCheck(),
		runtimeKubeletCompatCheck(),
		runtimeDefaultChangeExposureCheck(),
		ciliumDNSProxyRestartCheck(),
		vpcCNIPolicyStartupRaceCheck(),
	}
}
