// Reads one case from case-read-service with Go's standard library alone.
//
//	go run main.go CRN [PATH]
//
// Settings from the environment:
//
//	CASE_READ_URL      https://host:port of the service
//	CASE_READ_CA       the CA that issued the service's certificate (PEM)
//	CASE_READ_CERT     this client's certificate (PEM), CASE_READ_KEY its key (PEM)
//	CASE_READ_API_KEY_FILE, CASE_READ_TOKEN_FILE   the API key and the bearer token
//
// Prints the HTTP status on the first line and the body on the second; exits 0 on 200.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func read(variable string) string {
	data, err := os.ReadFile(os.Getenv(variable))
	if err != nil {
		fmt.Fprintln(os.Stderr, variable+":", err)
		os.Exit(2)
	}
	return strings.TrimSpace(string(data))
}

func main() {
	certificate, err := tls.LoadX509KeyPair(os.Getenv("CASE_READ_CERT"), os.Getenv("CASE_READ_KEY"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "client certificate:", err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(read("CASE_READ_CA"))) {
		fmt.Fprintln(os.Stderr, "CASE_READ_CA: no certificate")
		os.Exit(2)
	}
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			// Let go of an idle connection before the service does (65 s unless its operator
			// says otherwise): a written-out Transport otherwise keeps one for ever.
			IdleConnTimeout: 30 * time.Second,
			TLSClientConfig: &tls.Config{
				Certificates: []tls.Certificate{certificate},
				RootCAs:      roots,
				MinVersion:   tls.VersionTLS12,
			},
		},
	}
	path := ""
	if len(os.Args) > 2 {
		path = os.Args[2]
	}
	request, _ := http.NewRequest("GET", os.Getenv("CASE_READ_URL")+"/case/"+url.PathEscape(os.Args[1])+path, nil)
	request.Header.Set("X-API-Key", read("CASE_READ_API_KEY_FILE"))
	request.Header.Set("Authorization", "Bearer "+read("CASE_READ_TOKEN_FILE"))
	request.Header.Set("Accept", "application/json")
	response, err := client.Do(request)
	if err != nil {
		fmt.Fprintln(os.Stderr, "request:", err)
		os.Exit(2)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	fmt.Println(response.StatusCode)
	fmt.Println(strings.TrimSpace(string(body)))
	if response.StatusCode != 200 {
		os.Exit(1)
	}
}
