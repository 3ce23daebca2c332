package traffic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/IBM/sarama"
)

// saramaDialer dials through the recorder (sarama's Net.Proxy.Dialer hook).
type saramaDialer struct {
	ctx  context.Context
	rec  *Recorder
	user string
}

func (d saramaDialer) Dial(network, addr string) (net.Conn, error) {
	return dial(d.ctx, d.rec, addr, d.user)
}

func (d saramaDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return dial(ctx, d.rec, addr, d.user)
}

func saramaAdmin(ctx context.Context, rec *Recorder, addr, user, pass string, version sarama.KafkaVersion) (sarama.ClusterAdmin, error) {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kdissect-sarama-" + user
	cfg.Version = version
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	cfg.Net.SASL.User = user
	cfg.Net.SASL.Password = pass
	cfg.Net.SASL.Handshake = true
	cfg.Net.SASL.Version = sarama.SASLHandshakeV1
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = saramaDialer{ctx: ctx, rec: rec, user: user}
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 10 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Admin.Retry.Max = 1
	cfg.Admin.Retry.Backoff = 100 * time.Millisecond
	cfg.Admin.Timeout = 10 * time.Second
	return sarama.NewClusterAdmin([]string{addr}, cfg)
}

// SaramaVersion is the Kafka version the admin sarama client claims. Sarama
// then sends CreateAcls v2 from ClusterAdmin.CreateACL, v1 from CreateACLs,
// and DeleteAcls v2 from DeleteACL.
var SaramaVersion = sarama.V3_0_0_0

// SaramaOldVersion is the version mallory's sarama client claims: sarama
// then sends CreateAcls v0 and DeleteAcls v0.
var SaramaOldVersion = sarama.V1_0_0_0

// Sarama drives IBM/sarama's ClusterAdmin:
//
//   - admin (SaramaVersion): CreateACL (v2) for User:alice WRITE on topic
//     orders; CreateACLs (v1) with a prefixed group for User:bob, a DENY for
//     User:Zoë from one host and a transactional ID; CreateACL (v2) with
//     resource type ANY, which kfake rejects (INVALID_REQUEST, which sarama
//     returns); ListAcls (DescribeAcls, not an exchange);
//     DeleteACL (v2) of orders' bindings; DeleteACL (v2) with an all-null
//     MATCH filter;
//   - mallory (SaramaOldVersion): CreateACL (v0) and DeleteACL (v0), answered
//     with CLUSTER_AUTHORIZATION_FAILED.
func Sarama(ctx context.Context, addr string, rec *Recorder) error {
	ca, err := saramaAdmin(ctx, rec, addr, AdminUser, AdminPass, SaramaVersion)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer ca.Close()

	if err := ca.CreateACL(
		sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "orders", ResourcePatternType: sarama.AclPatternLiteral},
		sarama.Acl{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationWrite, PermissionType: sarama.AclPermissionAllow},
	); err != nil {
		return fmt.Errorf("CreateACL: %w", err)
	}
	if err := ca.CreateACLs([]*sarama.ResourceAcls{
		{
			Resource: sarama.Resource{ResourceType: sarama.AclResourceGroup, ResourceName: "consumers-", ResourcePatternType: sarama.AclPatternPrefixed},
			Acls: []*sarama.Acl{
				{Principal: "User:bob", Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionAllow},
				{Principal: "User:Zoë", Host: "198.51.100.9", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionDeny},
			},
		},
		{
			Resource: sarama.Resource{ResourceType: sarama.AclResourceTransactionalID, ResourceName: "txn-checkout", ResourcePatternType: sarama.AclPatternLiteral},
			Acls: []*sarama.Acl{
				{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationWrite, PermissionType: sarama.AclPermissionAllow},
			},
		},
		{
			Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "orders", ResourcePatternType: sarama.AclPatternLiteral},
			Acls: []*sarama.Acl{
				{Principal: "User:Zoë", Host: "192.0.2.7", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionDeny},
			},
		},
	}); err != nil {
		return fmt.Errorf("CreateACLs: %w", err)
	}
	if err := ca.CreateACL(
		sarama.Resource{ResourceType: sarama.AclResourceAny, ResourceName: "anything", ResourcePatternType: sarama.AclPatternLiteral},
		sarama.Acl{Principal: "User:alice", Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionAllow},
	); !errors.Is(err, sarama.ErrInvalidRequest) {
		return fmt.Errorf("CreateACL (invalid): got %v, want %v", err, sarama.ErrInvalidRequest)
	}

	if _, err := ca.ListAcls(sarama.AclFilter{
		ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny,
	}); err != nil {
		return fmt.Errorf("ListAcls: %w", err)
	}

	name := "orders"
	m, err := ca.DeleteACL(sarama.AclFilter{
		ResourceType: sarama.AclResourceTopic, ResourceName: &name, ResourcePatternTypeFilter: sarama.AclPatternLiteral,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny,
	}, false)
	if err != nil {
		return fmt.Errorf("DeleteACL orders: %w", err)
	}
	if len(m) != 2 {
		return fmt.Errorf("DeleteACL orders: %d matching ACLs, want 2", len(m))
	}
	m, err = ca.DeleteACL(sarama.AclFilter{
		ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternMatch,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny,
	}, false)
	if err != nil {
		return fmt.Errorf("DeleteACL all: %w", err)
	}
	if len(m) != 3 {
		return fmt.Errorf("DeleteACL all: %d matching ACLs, want 3", len(m))
	}

	mal, err := saramaAdmin(ctx, rec, addr, MalloryUser, MalloryPass, SaramaOldVersion)
	if err != nil {
		return fmt.Errorf("mallory client: %w", err)
	}
	defer mal.Close()
	if err := mal.CreateACL(
		sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "orders", ResourcePatternType: sarama.AclPatternLiteral},
		sarama.Acl{Principal: "User:mallory", Host: "*", Operation: sarama.AclOperationAll, PermissionType: sarama.AclPermissionAllow},
	); !errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
		return fmt.Errorf("mallory CreateACL: got %v, want %v", err, sarama.ErrClusterAuthorizationFailed)
	}
	_, err = mal.DeleteACL(sarama.AclFilter{
		ResourceType: sarama.AclResourceTopic, ResourceName: &name, ResourcePatternTypeFilter: sarama.AclPatternLiteral,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny,
	}, false)
	if !errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
		return fmt.Errorf("mallory DeleteACL: got %v, want %v", err, sarama.ErrClusterAuthorizationFailed)
	}
	return nil
}
