package traffic

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

func kgoClient(rec *Recorder, addr, user, pass, clientID string) (*kgo.Client, error) {
	return kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ClientID(clientID),
		kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			return dial(ctx, rec, host, user)
		}),
		kgo.RequestRetries(1),
		kgo.RetryTimeout(5*time.Second),
		kgo.MetadataMinAge(time.Second),
	)
}

// Kadm drives franz-go's kadm admin client (which picks CreateAcls and
// DeleteAcls v3 against kfake):
//
//   - admin: metadata, then CreateACLs for User:alice WRITE on topic orders
//     (LITERAL), User:bob and User:carol READ on groups prefixed consumers-
//     from two hosts, a DENY for User:Zoë on orders and payments from one
//     host, ALTER on the cluster for User:ops, and a delegation-token binding
//     that kfake rejects (INVALID_REQUEST);
//   - admin: DescribeACLs (not recorded as an exchange), DeleteACLs of
//     alice's binding, then of every remaining binding;
//   - mallory: CreateACLs and DeleteACLs, answered with
//     CLUSTER_AUTHORIZATION_FAILED.
func Kadm(ctx context.Context, addr string, rec *Recorder) error {
	cl, err := kgoClient(rec, addr, AdminUser, AdminPass, "kdissect-kadm-admin")
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	if _, err := adm.Metadata(ctx); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}

	creates := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Topics("orders").
			ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:bob", "User:carol").AllowHosts("10.0.0.5", "10.0.0.6").
			Groups("consumers-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpDescribe),
		kadm.NewACLs().Deny("User:Zoë").DenyHosts("192.0.2.7").Topics("orders", "payments").
			Operations(kadm.OpRead, kadm.OpWrite),
		kadm.NewACLs().Allow("User:ops").Clusters().Operations(kadm.OpAlter, kadm.OpDescribe).
			TransactionalIDs("txn-checkout").
			DelegationTokens("token-1"), // kfake rejects DELEGATION_TOKEN bindings
	}
	for i, b := range creates {
		rs, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("create #%d: %w", i, err)
		}
		if len(rs) == 0 {
			return fmt.Errorf("create #%d: no results", i)
		}
	}

	if _, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Operations().Allow().Deny().AllowHosts().DenyHosts()); err != nil {
		return fmt.Errorf("describe: %w", err)
	}

	dels := []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders").
			ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpWrite),
		kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
			Operations().Allow().Deny().AllowHosts().DenyHosts(), // all-null filter
	}
	for i, b := range dels {
		rs, err := adm.DeleteACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("delete #%d: %w", i, err)
		}
		for _, r := range rs {
			if r.Err != nil {
				return fmt.Errorf("delete #%d: %v", i, r.Err)
			}
		}
	}

	mcl, err := kgoClient(rec, addr, MalloryUser, MalloryPass, "kdissect-kadm-mallory")
	if err != nil {
		return err
	}
	defer mcl.Close()
	madm := kadm.NewClient(mcl)
	rs, err := madm.CreateACLs(ctx, kadm.NewACLs().Allow("User:mallory").Topics("orders").Operations(kadm.OpAll))
	if err != nil {
		return fmt.Errorf("mallory create: %w", err)
	}
	for _, r := range rs {
		if r.Err != kerr.ClusterAuthorizationFailed {
			return fmt.Errorf("mallory create: got %v, want CLUSTER_AUTHORIZATION_FAILED", r.Err)
		}
	}
	drs, err := madm.DeleteACLs(ctx, kadm.NewACLs().Topics("orders").Operations().Allow().AllowHosts())
	if err != nil {
		return fmt.Errorf("mallory delete: %w", err)
	}
	for _, r := range drs {
		if r.Err != kerr.ClusterAuthorizationFailed {
			return fmt.Errorf("mallory delete: got %v, want CLUSTER_AUTHORIZATION_FAILED", r.Err)
		}
	}
	return nil
}
