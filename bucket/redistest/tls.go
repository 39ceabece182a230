package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// testCA is one CA per test binary, so TLS servers trust each other (a TLS
// replica verifies its TLS master); each server gets its own certificates.
var testCA struct {
	once sync.Once
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
	err  error
}

func loadCA() (*x509.Certificate, []byte, *ecdsa.PrivateKey, error) {
	testCA.once.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			testCA.err = err
			return
		}
		tmpl := &x509.Certificate{
			SerialNumber:          serial(),
			Subject:               pkix.Name{CommonName: "bucketctl redistest CA"},
			NotBefore:             time.Now().Add(-time.Hour),
			NotAfter:              time.Now().Add(48 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			testCA.err = err
			return
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			testCA.err = err
			return
		}
		testCA.cert, testCA.der, testCA.key = cert, der, key
	})
	return testCA.cert, testCA.der, testCA.key, testCA.err
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// tlsBundle holds the PEM files of one TLS server.
type tlsBundle struct {
	caFile, certFile, keyFile     string
	clientCertFile, clientKeyFile string
	caPool                        *x509.CertPool
	clientCert                    tls.Certificate
}

// newTLSBundle writes ca.crt, redis.crt/redis.key (server; also the client
// certificate redis-server presents when it replicates) and
// client.crt/client.key into dir.
func newTLSBundle(dir string) (*tlsBundle, error) {
	caCert, caDER, caKey, err := loadCA()
	if err != nil {
		return nil, fmt.Errorf("CA: %w", err)
	}
	b := &tlsBundle{
		caFile:         filepath.Join(dir, "ca.crt"),
		certFile:       filepath.Join(dir, "redis.crt"),
		keyFile:        filepath.Join(dir, "redis.key"),
		clientCertFile: filepath.Join(dir, "client.crt"),
		clientKeyFile:  filepath.Join(dir, "client.key"),
		caPool:         x509.NewCertPool(),
	}
	b.caPool.AddCert(caCert)
	if err := writePEM(b.caFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "redis-server"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if _, err := issue(server, caCert, caKey, b.certFile, b.keyFile); err != nil {
		return nil, err
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "redistest client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if b.clientCert, err = issue(client, caCert, caKey, b.clientCertFile, b.clientKeyFile); err != nil {
		return nil, err
	}
	return b, nil
}

// clientConfig trusts the CA and presents the client certificate.
func (b *tlsBundle) clientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		RootCAs:      b.caPool,
		Certificates: []tls.Certificate{b.clientCert},
	}
}

// issue signs tmpl with the CA and writes the certificate and its key.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER); err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
