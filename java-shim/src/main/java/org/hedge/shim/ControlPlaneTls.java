package org.hedge.shim;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

import org.apache.hadoop.conf.Configuration;

/**
 * TLS to `hedge serve` ({@link HedgeConf#TLS}): both channels, Py4J and the data channel, are
 * layered over a connected TCP socket with {@link #wrap}, the handshake done at once under the
 * caller's timeout and the server's certificate checked against the trusted CAs and the host
 * name of {@link HedgeConf#ADDRESS} (as HTTPS does). javax.net.ssl only: no new dependency.
 */
public final class ControlPlaneTls {
  /** The handshake failed: the message says which setting to check on which side. */
  public static final class HandshakeException extends IOException {
    private static final long serialVersionUID = 1L;

    HandshakeException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final SSLSocketFactory factory;
  private final String trust; // where the trusted CAs come from, for messages

  ControlPlaneTls(SSLContext context, String trust) {
    this.factory = context.getSocketFactory();
    this.trust = trust;
    warmUp(context);
  }

  /**
   * Write one ClientHello into a buffer: the first handshake of a JVM otherwise spends about a
   * second loading and initialising JSSE, past the deadline of the first session's open (the
   * AM then used Hadoop's rule for its first scan). Here it is paid once, when the AM starts.
   */
  private static void warmUp(SSLContext context) {
    try {
      javax.net.ssl.SSLEngine engine = context.createSSLEngine("hedge.invalid", 1);
      engine.setUseClientMode(true);
      java.nio.ByteBuffer out =
          java.nio.ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
      engine.wrap(java.nio.ByteBuffer.allocate(0), out);
    } catch (javax.net.ssl.SSLException | RuntimeException e) {
      // only a warm-up: the real handshake reports what is wrong
    }
  }

  /**
   * TLS as the configuration asks for it, or null when {@link HedgeConf#TLS} is false.
   *
   * @throws IOException naming the property and value when a CA file or trust store cannot be
   *     read or holds no certificate
   */
  public static ControlPlaneTls fromConf(Configuration conf) throws IOException {
    if (!conf.getBoolean(HedgeConf.TLS, false)) {
      return null;
    }
    String ca = conf.getTrimmed(HedgeConf.TLS_CA_FILE, "");
    String store = conf.getTrimmed(HedgeConf.TLS_TRUSTSTORE, "");
    try {
      if (!ca.isEmpty()) {
        return new ControlPlaneTls(context(caKeyStore(ca)), HedgeConf.TLS_CA_FILE + " = " + ca);
      }
      if (!store.isEmpty()) {
        String password = conf.get(HedgeConf.TLS_TRUSTSTORE_PASSWORD, "");
        return new ControlPlaneTls(context(trustStore(store, password)),
            HedgeConf.TLS_TRUSTSTORE + " = " + store);
      }
      return new ControlPlaneTls(context(null), "the JVM's default trust store (neither "
          + HedgeConf.TLS_CA_FILE + " nor " + HedgeConf.TLS_TRUSTSTORE + " is set)");
    } catch (GeneralSecurityException e) {
      throw new IOException(HedgeConf.TLS + " = true: cannot set up TLS (" + e + ")", e);
    }
  }

  /** A key store holding the certificates of the PEM file at {@code path}. */
  static KeyStore caKeyStore(String path) throws IOException, GeneralSecurityException {
    Collection<? extends Certificate> certificates;
    try (InputStream in = new FileInputStream(new File(path))) {
      certificates = CertificateFactory.getInstance("X.509").generateCertificates(in);
    } catch (IOException e) {
      throw new IOException("cannot read " + HedgeConf.TLS_CA_FILE + " = " + path + " (" + e
          + "); give a path readable on every node, or ship it with -files", e);
    } catch (java.security.cert.CertificateException e) {
      throw new IOException(HedgeConf.TLS_CA_FILE + " = " + path + " is not a PEM certificate "
          + "file (" + e.getMessage() + "); expected -----BEGIN CERTIFICATE----- blocks", e);
    }
    if (certificates.isEmpty()) {
      throw new IOException(HedgeConf.TLS_CA_FILE + " = " + path + " holds no certificate; "
          + "expected -----BEGIN CERTIFICATE----- blocks (the CA's, or hedge serve's own)");
    }
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    int i = 0;
    for (Certificate c : certificates) {
      store.setCertificateEntry("hedge-ca-" + i++, c);
    }
    return store;
  }

  private static KeyStore trustStore(String path, String password)
      throws IOException, GeneralSecurityException {
    // the JVM default type reads JKS and PKCS12 alike (Java 8u60+: keystore.type.compat)
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    try (InputStream in = new FileInputStream(new File(path))) {
      store.load(in, password.isEmpty() ? null : password.toCharArray());
    } catch (IOException e) {
      throw new IOException("cannot read " + HedgeConf.TLS_TRUSTSTORE + " = " + path + " (" + e
          + "); expected a JKS or PKCS12 trust store (keytool -importcert) and its "
          + HedgeConf.TLS_TRUSTSTORE_PASSWORD, e);
    }
    return store;
  }

  private static SSLContext context(KeyStore trusted) throws GeneralSecurityException {
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trusted); // null: the JVM's default trust store
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  /**
   * TLS over the connected socket {@code plain} to {@code host:port}, handshake done (bounded by
   * {@code timeoutMs}); the certificate must name {@code host}. Closes {@code plain} on failure.
   *
   * @throws HandshakeException naming the address, the cause and what to check
   */
  public Socket wrap(Socket plain, String host, int port, int timeoutMs) throws IOException {
    plain.setSoTimeout(timeoutMs);
    SSLSocket socket = null;
    try {
      socket = (SSLSocket) factory.createSocket(plain, host, port, true);
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate names host
      socket.setSSLParameters(parameters);
      socket.startHandshake();
      return socket;
    } catch (IOException e) {
      try {
        (socket != null ? socket : plain).close();
      } catch (IOException ignored) {
        // closing is best effort
      }
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      throw new HandshakeException("TLS handshake with hedge serve at " + host + ":" + port
          + " failed (" + ControlPlaneClient.describe(root) + "); with " + HedgeConf.TLS
          + " = true, hedge serve must run with [server] tls_cert and tls_key, and its "
          + "certificate must name " + host + " and be signed by a CA in " + trust, e);
    }
  }
}
