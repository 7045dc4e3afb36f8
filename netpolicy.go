package sandboxexec

import (
	"errors"
)

// checkNetworkPolicy refuses AllowedDomains that no runner could apply.
func (p SandboxPolicy) checkNetworkPolicy() error {
	if len(p.AllowedDomains) == 0 {
		return nil
	}
	if p.NetworkAccess {
		return errors.New("sandboxexec: policy: AllowedDomains and NetworkAccess exclude each other: " +
			"NetworkAccess already allows every host")
	}
	// TODO(netproxy): validate the patterns.
	return nil
}
