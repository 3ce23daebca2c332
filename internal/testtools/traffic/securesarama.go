package traffic

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/IBM/sarama"
)

// sessionDialer hands sarama the session's connections (TLS done by the
// session, so sarama's own TLS stays off).
type sessionDialer struct {
	s    *session
	spec clientSpec
}

func (d sessionDialer) Dial(_, _ string) (net.Conn, error) { return d.s.dial(d.s.ctx, d.spec) }

func (d sessionDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	return d.s.dial(ctx, d.spec)
}

// saramaACLs drives IBM/sarama's ClusterAdmin (claiming Kafka 3.0.0) as
// spec (SASL PLAIN or SCRAM, SaslHandshake v1 or v0): CreateACL (v2),
// CreateACLs (v1), DeleteACL (v2).
func (s *session) saramaACLs(spec clientSpec) error {
	cfg := sarama.NewConfig()
	cfg.ClientID = spec.clientID
	cfg.Version = SaramaVersion
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	cfg.Net.SASL.User = spec.user
	cfg.Net.SASL.Password = spec.pass
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	if spec.handshakeV0 {
		cfg.Net.SASL.Version = sarama.SASLHandshakeV0
		// sarama's rule: a client that old sends no ApiVersions first.
		cfg.ApiVersionsRequest = false
	}
	switch spec.mech {
	case MechPlain:
	case MechScram256, MechScram512:
		cfg.Net.SASL.Mechanism = sarama.SASLMechanism(spec.mech)
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient {
			return &scramForSarama{ctx: s.ctx, mech: spec.mech}
		}
	default:
		return fmt.Errorf("sarama: mechanism %q", spec.mech)
	}
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = sessionDialer{s: s, spec: spec}
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 10 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Admin.Retry.Max = 1
	cfg.Admin.Timeout = 10 * time.Second
	ca, err := sarama.NewClusterAdmin([]string{s.addr}, cfg)
	if err != nil {
		return fmt.Errorf("sarama admin: %w", err)
	}
	defer ca.Close()
	if err := ca.CreateACL(
		sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "payments", ResourcePatternType: sarama.AclPatternLiteral},
		sarama.Acl{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationWrite, PermissionType: sarama.AclPermissionAllow},
	); err != nil {
		return fmt.Errorf("sarama CreateACL: %w", err)
	}
	if err := ca.CreateACLs([]*sarama.ResourceAcls{{
		Resource: sarama.Resource{ResourceType: sarama.AclResourceGroup, ResourceName: "payments-", ResourcePatternType: sarama.AclPatternPrefixed},
		Acls: []*sarama.Acl{
			{Principal: "User:bob", Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionAllow},
			{Principal: "User:Zoë", Host: "198.51.100.9", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionDeny},
		},
	}}); err != nil {
		return fmt.Errorf("sarama CreateACLs: %w", err)
	}
	m, err := ca.DeleteACL(sarama.AclFilter{
		ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternMatch,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny,
	}, false)
	if err != nil {
		return fmt.Errorf("sarama DeleteACL: %w", err)
	}
	if len(m) != 3 {
		return fmt.Errorf("sarama DeleteACL: %d matching ACLs, want 3", len(m))
	}
	return nil
}
