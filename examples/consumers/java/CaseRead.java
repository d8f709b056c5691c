// Reads one case from case-read-service with Java 17's HttpClient and nothing else.
//
//   java CaseRead.java CRN [PATH]        (the JDK compiles and runs a single source file)
//
// Settings from the environment:
//   CASE_READ_URL                     https://host:port of the service
//   CASE_READ_KEYSTORE                this client's certificate and key, PKCS12
//   CASE_READ_TRUSTSTORE              the CA that issued the service's certificate, PKCS12
//   CASE_READ_STORE_PASSWORD          the password of both stores
//   CASE_READ_API_KEY_FILE, CASE_READ_TOKEN_FILE   the API key and the bearer token
//
// Prints the HTTP status on the first line and the body on the second; exits 0 on 200.

import java.io.FileInputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class CaseRead {
  static KeyStore load(String path, char[] password) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (FileInputStream in = new FileInputStream(path)) {
      store.load(in, password);
    }
    return store;
  }

  static String read(String variable) throws Exception {
    return Files.readString(Path.of(System.getenv(variable))).trim();
  }

  public static void main(String[] args) throws Exception {
    char[] password = System.getenv("CASE_READ_STORE_PASSWORD").toCharArray();
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(load(System.getenv("CASE_READ_KEYSTORE"), password), password);
    TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(load(System.getenv("CASE_READ_TRUSTSTORE"), password));
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(keys.getKeyManagers(), trust.getTrustManagers(), null);

    // The service speaks HTTP/1.1 only; saying so spares the client an upgrade attempt.
    HttpClient client = HttpClient.newBuilder()
        .sslContext(tls)
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(10))
        .build();
    String crn = URLEncoder.encode(args[0], StandardCharsets.UTF_8);
    String path = args.length > 1 ? args[1] : "";
    HttpRequest request = HttpRequest.newBuilder(URI.create(System.getenv("CASE_READ_URL") + "/case/" + crn + path))
        .header("X-API-Key", read("CASE_READ_API_KEY_FILE"))
        .header("Authorization", "Bearer " + read("CASE_READ_TOKEN_FILE"))
        .header("Accept", "application/json")
        .timeout(Duration.ofSeconds(10))
        .GET()
        .build();
    HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
    System.out.println(response.statusCode());
    System.out.println(response.body());
    System.exit(response.statusCode() == 200 ? 0 : 1);
  }
}
