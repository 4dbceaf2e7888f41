package mpesa

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
)

// credential encrypts the initiator password into a SecurityCredential.
type credential struct {
	key *rsa.PublicKey
}

// parseCertificate reads Safaricom's certificate (PEM; a bare public key
// is taken too).
func parseCertificate(data []byte) (*credential, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("mpesa: the certificate is not PEM")
	}
	var pub any
	switch block.Type {
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("mpesa: certificate: %w", err)
		}
		pub = cert.PublicKey
	case "PUBLIC KEY":
		var err error
		if pub, err = x509.ParsePKIXPublicKey(block.Bytes); err != nil {
			return nil, fmt.Errorf("mpesa: public key: %w", err)
		}
	default:
		return nil, fmt.Errorf("mpesa: a PEM %q block is neither a certificate nor a public key", block.Type)
	}
	key, ok := pub.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("mpesa: the certificate's key is not RSA")
	}
	return &credential{key: key}, nil
}

// securityCredential is Daraja's SecurityCredential: the initiator
// password encrypted with the certificate's key, RSA PKCS #1 v1.5, in
// base64. Each call draws fresh padding, so the value differs every time.
func (c *credential) securityCredential(password string) (string, error) {
	ct, err := rsa.EncryptPKCS1v15(rand.Reader, c.key, []byte(password))
	if err != nil {
		return "", fmt.Errorf("mpesa: encrypting the initiator password: %w", err)
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}
