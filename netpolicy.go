package sandboxexec

import (
	"errors"
	"fmt"

	"github.com/agentbox/sandboxexec/internal/netproxy"
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
	if _, err := netproxy.NewMatcher(p.AllowedDomains); err != nil {
		return fmt.Errorf("sandboxexec: policy: AllowedDomains: %w", err)
	}
	return nil
}
