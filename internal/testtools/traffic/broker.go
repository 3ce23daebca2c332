// Package traffic makes real Kafka ACL admin traffic (CreateAcls, API key 30,
// and DeleteAcls, API key 31) against an in-process kfake broker on
// 127.0.0.1, and records what the clients sent and received.
//
// Each scenario drives one client library (franz-go's kadm, raw kmsg frames
// written to a TCP connection by hand, IBM/sarama) and returns the ACL
// exchanges it made. The exchanges are read off the clients' own connections:
// every connection is wrapped so that the bytes it writes and reads are cut
// into Kafka frames, paired by correlation ID and decoded with kmsg. So the
// API version and correlation ID of each exchange are the ones that went on
// the wire, and the request and response are what the client sent and got.
//
// The broker runs with SASL/PLAIN and ACL checks on: the superuser admin may
// create and delete ACLs, the user mallory gets CLUSTER_AUTHORIZATION_FAILED.
//
// The TLS and SASL scenarios (SecureNames, BuildTLSCapture) go one step
// further: their connections are also recorded below TLS (Wire), and the
// recorded bytes are written as a pcap (Synth) with the NSS key log
// crypto/tls wrote, so no live capture is needed.
package traffic

import (
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// API keys of the two messages this package is about.
const (
	APICreateAcls int16 = 30
	APIDeleteAcls int16 = 31
)

// Credentials the broker knows (SASL/PLAIN).
const (
	AdminUser     = "admin" // superuser: bypasses ACL checks
	AdminPass     = "admin-secret"
	MalloryUser   = "mallory" // plain user without ALTER on the cluster
	MalloryPass   = "mallory-secret"
	BrokerCluster = "kdissect-traffic"
)

// Broker is a one-node kfake cluster listening on 127.0.0.1.
type Broker struct {
	Cluster *kfake.Cluster
	Addr    string // 127.0.0.1:PORT
	Port    int
}

// StartBroker starts a one-node kfake cluster on 127.0.0.1:port (port 0
// picks a free port) with SASL/PLAIN and ACL checks enabled: AdminUser is a
// superuser, MalloryUser is an ordinary user with no ACLs. Close it with
// Broker.Close.
func StartBroker(port int) (*Broker, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port %d out of range", port)
	}
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ClusterID(BrokerCluster),
		kfake.EnableSASL(),
		kfake.EnableACLs(),
		kfake.Superuser("PLAIN", AdminUser, AdminPass),
		kfake.User("PLAIN", MalloryUser, MalloryPass),
		kfake.SeedTopics(1, "orders"),
	)
	if err != nil {
		return nil, err
	}
	addrs := c.ListenAddrs()
	if len(addrs) != 1 {
		c.Close()
		return nil, fmt.Errorf("kfake listens on %d addresses, want 1", len(addrs))
	}
	host, p, err := net.SplitHostPort(addrs[0])
	if err != nil || host != "127.0.0.1" {
		c.Close()
		return nil, fmt.Errorf("kfake listens on %q, want 127.0.0.1", addrs[0])
	}
	pn, _ := strconv.Atoi(p)
	return &Broker{Cluster: c, Addr: addrs[0], Port: pn}, nil
}

// Close stops the broker.
func (b *Broker) Close() { b.Cluster.Close() }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
