package org.hedge.shim;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.SocketFactory;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import py4j.ClientServer;

/**
 * The shim's connection to `hedge serve`: sessions are opened through Py4J (authenticated with
 * the shared token), scans travel over the session's data channel (docs/wire-format.md).
 *
 * <p>Every call is bounded by the deadline. Session calls (open, close) run on a worker thread;
 * on time-out the sockets are closed so the worker cannot hang. Scans run on the caller's
 * thread: reads time out by SO_TIMEOUT, and a watchdog that looks every half deadline closes
 * the socket of an exchange past the deadline (a blocked write ends within 1.5 deadlines; the
 * answer of an exchange that took longer than the deadline is discarded). Failures open a {@link CircuitBreaker} with doubling
 * back-off; while it is open calls return at once. The first failure after a healthy period is
 * logged at WARN, later ones at DEBUG, the recovery at INFO: an operator sees one line per outage.
 */
public class ControlPlaneClient implements Closeable {
  private static final Log LOG = LogFactory.getLog(ControlPlaneClient.class);
  static final int SOCKET_BUFFER = 4 << 20;

  /** The policy or the job was refused by the server: do not ask again for this job. */
  public static final class RefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message);
    }
  }

  /** One job's session and its data connection. */
  static final class Session {
    final long id;
    final byte[] secret;
    final int dataPort;
    volatile Socket socket; // closed by the deadline watchdog from another thread
    // System.nanoTime() when the running exchange began, 0 when none runs (watchdog reads it)
    volatile long exchangeSince;
    DataInputStream in;
    OutputStream out;
    // response buffers, reused by every scan of the session (grown when an answer is larger)
    final byte[] head = new byte[WireFormat.RESPONSE_HEADER];
    byte[] body = new byte[256];

    Session(long id, byte[] secret, int dataPort) {
      this.id = id;
      this.secret = secret;
      this.dataPort = dataPort;
    }

    /** Close the data connection (any thread; unblocks a read or write in progress). */
    void disconnect() {
      Socket open = socket;
      socket = null;
      if (open != null) {
        try {
          open.close();
        } catch (IOException ignored) {
          // closing is best effort
        }
      }
    }
  }

  /** The server does not know this session any more (it restarted): open a new one. */
  static final class SessionLostException extends IOException {
    private static final long serialVersionUID = 1L;

    SessionLostException(String message) {
      super(message);
    }
  }

  private final String host;
  private final int port;
  private final String token;
  private final int deadlineMs;
  private final CircuitBreaker breaker;
  private final File recordDir;
  private final ControlPlaneTls tls; // null: plain TCP
  private final ExecutorService worker;
  private final ScheduledExecutorService watchdog;
  // sessions with a data connection made (connectData): the ones the watchdog looks at
  private final java.util.Set<Session> sessions = ConcurrentHashMap.newKeySet();
  private ClientServer py4j;
  private ControlPlane plane;
  private volatile boolean healthy = true;
  private int lastRejectedSeqLogged = -1;
  private long fallbackScans;

  public ControlPlaneClient(String host, int port, String token, int deadlineMs,
      long backoffInitialMs, long backoffMaxMs, File recordDir) {
    this(host, port, token, deadlineMs, backoffInitialMs, backoffMaxMs, recordDir, null);
  }

  /** A client whose two channels speak TLS when {@code tls} is not null. */
  public ControlPlaneClient(String host, int port, String token, int deadlineMs,
      long backoffInitialMs, long backoffMaxMs, File recordDir, ControlPlaneTls tls) {
    this.tls = tls;
    this.host = host;
    this.port = port;
    this.token = token;
    this.deadlineMs = deadlineMs;
    this.breaker = new CircuitBreaker(backoffInitialMs, backoffMaxMs);
    this.recordDir = recordDir;
    ThreadFactory daemons = new ThreadFactory() {
      @Override
      public Thread newThread(Runnable r) {
        Thread t = new Thread(r, "hedge-controlplane");
        t.setDaemon(true);
        return t;
      }
    };
    this.worker = Executors.newCachedThreadPool(daemons);
    // The watchdog looks at the sessions every half deadline and closes the socket of an
    // exchange running past the deadline (so even a blocked write ends within 1.5 deadlines).
    // A scan only writes a timestamp: no timer is armed or cancelled, and no thread is woken,
    // on the scan's critical path (a per-scan timer woke the watchdog thread at every scan).
    this.watchdog = Executors.newSingleThreadScheduledExecutor(daemons);
    long period = Math.max(5, deadlineMs / 2);
    watchdog.scheduleWithFixedDelay(new Runnable() {
      @Override
      public void run() {
        closeLateExchanges();
      }
    }, period, period, TimeUnit.MILLISECONDS);
  }

  public String address() {
    return host + ":" + port;
  }

  public boolean healthy() {
    return healthy;
  }

  /** Scans decided without the control plane since this client was created. */
  public long fallbackScans() {
    return fallbackScans;
  }

  /** Record one scan decided by the fallback (counted, reported with the next answer). */
  void countFallback() {
    fallbackScans++;
  }

  /**
   * A refusal's reason, with the fix where it names what only a newer server knows: an older
   * 'hedge serve' takes the ResourceManager address this jar sends for an unknown policy
   * parameter.
   */
  static String explainRefusal(String reason) {
    if (!reason.contains("no parameter '" + ResourceManagerAddress.PARAM + "'")) {
      return reason;
    }
    return reason + "; that 'hedge serve' is older than this hedge-shim jar, which sends the "
        + "ResourceManager's address: upgrade the control plane";
  }

  /**
   * Open a session; null when the control plane is unavailable now (try later).
   *
   * @throws RefusedException when the server answered and refused (policy, parameters, limits)
   */
  Session open(final String jobId, final String policy, final String params, long now)
      throws RefusedException {
    if (!breaker.allows(now)) {
      return null;
    }
    String answer;
    try {
      answer = call(new Callable<String>() {
        @Override
        public String call() {
          return plane().open(jobId, policy, params);
        }
      }, null);
    } catch (Exception e) {
      failed(now, "open session for " + jobId + ": " + reason(e));
      resetPy4j();
      return null;
    }
    if (answer == null || answer.startsWith("ERROR")) {
      breaker.success();
      throw new RefusedException((answer == null ? "empty answer"
          : explainRefusal(answer.substring(5).trim()))
          + " (" + HedgeConf.POLICY + " = " + (policy.isEmpty() ? "unset: the server's default"
          : policy) + ")");
    }
    String[] f = answer.trim().split(" ");
    try {
      if (f.length != 5 || !"OK".equals(f[0]) || f[2].length() != 32) {
        throw new NumberFormatException(answer);
      }
      int version = Integer.parseInt(f[4]);
      if (version != WireFormat.VERSION) {
        // Not an outage: retrying cannot help until one side is upgraded.
        breaker.success();
        throw new RefusedException("'hedge serve' at " + address() + " speaks wire version "
            + version + ", this hedge-shim jar speaks " + WireFormat.VERSION + "; install the "
            + "hedge-shim jar of the same hedge release as the control plane (or upgrade the "
            + "control plane)");
      }
      Session s = new Session(Long.parseLong(f[1]), hex(f[2]), Integer.parseInt(f[3]));
      succeeded();
      return s;
    } catch (NumberFormatException e) {
      failed(now, "unexpected answer to open: " + answer);
      return null;
    }
  }

  /** Close a session, best effort (never blocks past the deadline). */
  void close(final Session s) {
    if (s == null) {
      return;
    }
    sessions.remove(s);
    s.disconnect();
    if (plane == null) {
      return;
    }
    try {
      call(new Callable<Void>() {
        @Override
        public Void call() {
          plane().close(Long.toString(s.id));
          return null;
        }
      }, null);
    } catch (Exception e) {
      LOG.debug("hedge: closing session " + s.id + ": " + describe(e));
    }
  }

  /**
   * One scan round trip. Returns the decision, or null when the scan must be decided by the
   * fallback (breaker open, unreachable, late, malformed or rejected answer).
   *
   * @throws SessionLostException when the server no longer knows the session
   */
  Decision scan(final Session s, final Scan scan, final ByteBuffer frame, String jobId, long now)
      throws SessionLostException {
    if (!breaker.allows(now)) {
      return null;
    }
    final int nTasks = scan.nMaps + scan.nReduces;
    Decision d;
    // The exchange runs on the caller's thread (no hand-off: each thread wake-up costs time
    // on a busy AM host); reads time out by SO_TIMEOUT, and the watchdog closes the socket of
    // an exchange past the deadline so even a blocked write cannot outlive it.
    long t0 = System.nanoTime();
    s.exchangeSince = t0 == 0 ? 1 : t0;
    try {
      d = exchange(s, frame, scan.seq, nTasks);
      if (System.nanoTime() - t0 > deadlineMs * 1_000_000L) {
        throw new TimeoutException("no answer within the " + deadlineMs + " ms deadline");
      }
    } catch (SessionLostException e) {
      // the server is up but restarted: not a failure, the caller opens a new session now
      sessions.remove(s);
      LOG.info("hedge: " + e.getMessage() + " (control plane restarted?); reopening");
      throw e;
    } catch (Exception e) {
      s.disconnect();
      resetPy4j(); // a dead data channel usually means stale Py4J connections too
      boolean late = System.nanoTime() - t0 >= deadlineMs * 1_000_000L;
      failed(now, "scan " + scan.seq + " of " + jobId + ": " + (late && !(e instanceof
          TimeoutException) ? "no answer within the " + deadlineMs + " ms deadline ("
          + describe(e) + ")" : describe(e)));
      return null;
    } finally {
      s.exchangeSince = 0;
    }
    record(jobId, scan.seq, frame, d);
    succeeded();
    if (d.status != Decision.STATUS_OK) {
      if (lastRejectedSeqLogged < 0) {
        LOG.warn("hedge: control plane rejected scan " + scan.seq + " of " + jobId + ": "
            + d.message + " (this scan uses Hadoop-default speculation)");
      } else {
        LOG.debug("hedge: rejected scan " + scan.seq + ": " + d.message);
      }
      lastRejectedSeqLogged = scan.seq;
      return null;
    }
    return d;
  }

  /** The watchdog's round: close the data connection of every exchange past the deadline. */
  private void closeLateExchanges() {
    long now = System.nanoTime();
    for (Session s : sessions) {
      long since = s.exchangeSince;
      if (since != 0 && now - since > deadlineMs * 1_000_000L) {
        s.disconnect();
      }
    }
  }

  /** One request/response on the session's data connection (the scan thread only). */
  private Decision exchange(Session s, ByteBuffer frame, int seq, int nTasks) throws IOException {
    if (s.socket == null) {
      connectData(s);
    }
    s.out.write(frame.array(), frame.arrayOffset(), frame.limit());
    s.out.flush();
    s.in.readFully(s.head);
    int length = WireFormat.bodyLength(ByteBuffer.wrap(s.head));
    if (length > s.body.length) {
      s.body = new byte[length];
    }
    s.in.readFully(s.body, 0, length);
    return WireFormat.decode(ByteBuffer.wrap(s.head), ByteBuffer.wrap(s.body, 0, length), seq,
        nTasks);
  }

  private void connectData(Session s) throws IOException {
    Socket socket = new Socket();
    socket.setTcpNoDelay(true);
    socket.setSendBufferSize(SOCKET_BUFFER); // a whole scan leaves in one write
    socket.setSoTimeout(deadlineMs);
    socket.connect(new InetSocketAddress(host, s.dataPort), deadlineMs);
    if (tls != null) {
      socket = tls.wrap(socket, host, s.dataPort, deadlineMs);
    }
    OutputStream out = socket.getOutputStream();
    DataInputStream in = new DataInputStream(socket.getInputStream());
    out.write(WireFormat.hello(s.id, s.secret));
    out.flush();
    byte[] reply = new byte[8];
    try {
      in.readFully(reply);
    } catch (java.io.EOFException e) {
      socket.close();
      throw new IOException("hedge serve closed the data connection to port " + s.dataPort
          + " before answering its hello: it refuses connections beyond its [limits] "
          + "max_connections and max_unauthenticated, and plain ones when it runs with TLS ("
          + HedgeConf.TLS + "); see its log", e);
    }
    ByteBuffer r = ByteBuffer.wrap(reply).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    if (r.get(0) != 'H' || r.get(3) != 'A') {
      socket.close();
      throw new IOException("bad handshake reply");
    }
    if (r.getInt(4) != 0) {
      socket.close();
      throw new SessionLostException("control plane does not know session " + s.id);
    }
    s.in = in;
    s.out = out;
    s.socket = socket;
    sessions.add(s); // watched from now on, whoever made the session
  }

  /** Run one call on a worker under the deadline; on time-out close what it may block on. */
  private <T> T call(Callable<T> task, Session session) throws Exception {
    Future<T> future = worker.submit(task);
    try {
      return future.get(deadlineMs, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      if (session != null) {
        session.disconnect();
      } else {
        resetPy4j();
      }
      throw new TimeoutException("no answer within the " + deadlineMs + " ms deadline");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof Exception ? (Exception) cause : e;
    }
  }

  private synchronized ControlPlane plane() {
    if (plane == null) {
      py4j = gateway(host, port, token, deadlineMs, tls);
      plane = entryPoint(py4j);
    }
    return plane;
  }

  /**
   * A Py4J client of `hedge serve` at host:port, authenticated with the token, every connect
   * and read bounded by timeoutMs; no Java-side server is started (only Java calls Python).
   * Shared by the speculator's sessions and ImkpPartitioner's mapping fetch. The caller shuts
   * it down.
   *
   * @throws IllegalStateException when the host name does not resolve
   */
  public static ClientServer gateway(String host, int port, String token, int timeoutMs) {
    return gateway(host, port, token, timeoutMs, null);
  }

  /** {@link #gateway(String, int, String, int)} over TLS when {@code tls} is not null. */
  public static ClientServer gateway(String host, int port, String token, int timeoutMs,
      ControlPlaneTls tls) {
    AuthAnswer.install();
    InetAddress address;
    try {
      address = InetAddress.getByName(host);
    } catch (IOException e) {
      throw new IllegalStateException("unknown control plane host " + host, e);
    }
    return new ClientServer.ClientServerBuilder()
        .autoStartJavaServer(false)
        .pythonAddress(address)
        .pythonPort(port)
        .authToken(token)
        .connectTimeout(timeoutMs)
        .readTimeout(timeoutMs)
        .socketFactory(new NoDelaySocketFactory(tls, host, timeoutMs))
        .build();
  }

  /** The control plane's entry point through a gateway made by {@link #gateway}. */
  public static ControlPlane entryPoint(ClientServer gateway) {
    return (ControlPlane) gateway.getPythonServerEntryPoint(new Class[] {ControlPlane.class});
  }

  private synchronized void resetPy4j() {
    if (py4j != null) {
      try {
        py4j.shutdown();
      } catch (RuntimeException e) {
        LOG.debug("hedge: py4j shutdown: " + e);
      }
    }
    py4j = null;
    plane = null;
  }

  private void failed(long now, String reason) {
    breaker.failure(now);
    if (healthy) {
      healthy = false;
      LOG.warn("hedge: control plane " + address() + " unavailable (" + reason + "); using "
          + "Hadoop-default speculation until it is back (retry in "
          + (breaker.openUntil() - now) + " ms, backing off); check that 'hedge serve' runs "
          + "at " + HedgeConf.ADDRESS + " = " + address() + " and this host can reach it");
    } else {
      LOG.debug("hedge: control plane still unavailable: " + reason);
    }
  }

  private void succeeded() {
    breaker.success();
    if (!healthy) {
      healthy = true;
      LOG.info("hedge: control plane " + address() + " is back; " + fallbackScans
          + " scans were decided by the fallback so far");
    }
  }

  private void record(String jobId, int seq, ByteBuffer frame, Decision d) {
    if (recordDir == null) {
      return;
    }
    File file = new File(recordDir, jobId + "-" + seq + ".req");
    try (FileOutputStream out = new FileOutputStream(file)) {
      out.write(frame.array(), frame.arrayOffset(), frame.limit());
    } catch (IOException e) {
      LOG.debug("hedge: cannot record " + file + ": " + e);
    }
    File answer = new File(recordDir, jobId + "-" + seq + ".resp");
    try (FileOutputStream out = new FileOutputStream(answer)) {
      StringBuilder sb = new StringBuilder();
      sb.append("status=").append(d.status).append('\n');
      sb.append("tasks=").append(java.util.Arrays.toString(d.specTask)).append('\n');
      sb.append("copies=").append(java.util.Arrays.toString(d.specCopies)).append('\n');
      sb.append("kills=").append(java.util.Arrays.toString(d.killAttempt)).append('\n');
      out.write(sb.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException e) {
      LOG.debug("hedge: cannot record " + answer + ": " + e);
    }
  }

  /** An exception for messages: its class's simple name and its message, if any. */
  /**
   * Why a call failed, for the log. A refused token is named as such, with the setting to fix:
   * otherwise it reads like a dead server (Py4J 0.10.9 wraps its token check's IOException
   * "Authentication with callback server unsuccessful." in "Error while obtaining a new
   * communication channel").
   */
  static String reason(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      String message = c.getMessage();
      if (c instanceof ControlPlaneTls.HandshakeException) {
        return message;
      }
      if (c instanceof py4j.Py4JAuthenticationException || (message != null
          && (message.startsWith("Authentication with callback server unsuccessful")
              || message.startsWith("Could not authenticate connection")))) {
        return authRefusal(AuthAnswer.last());
      }
    }
    // Py4J wraps what went wrong ("Error while obtaining a new communication channel"):
    // the root cause (Connection refused, UnknownHostException) is what an operator can fix.
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? describe(e) : describe(e) + " (" + describe(root) + ")";
  }

  /**
   * Why Py4J's authentication failed, from the line the server answered the token with (Py4J's
   * exception says only "unsuccessful" whatever the answer): "!xn" is Py4J's answer to a wrong
   * token, "!xhedge: why" a refusal by hedge serve, "null" a connection closed unanswered.
   */
  static String authRefusal(String answer) {
    if (answer != null && answer.startsWith("!xhedge: ")) {
      return "hedge serve refused the connection: " + answer.substring(9);
    }
    if ("null".equals(answer)) {
      return "the server closed the connection before answering the token: hedge serve does so "
          + "beyond its [limits] max_connections and max_unauthenticated, or when the server at "
          + HedgeConf.ADDRESS + " is not hedge serve; see its log";
    }
    if (answer == null || answer.startsWith("!x")) {
      return "wrong token: the server refused the token in " + HedgeConf.TOKEN_FILE
          + "; it must hold the same token as the file hedge serve reads (--token-file)";
    }
    return "the server answered the token with '" + (answer.length() > 60
        ? answer.substring(0, 60) + "..." : answer) + "', not as hedge serve does; check that "
        + HedgeConf.ADDRESS + " names hedge serve's --address";
  }

  public static String describe(Throwable e) {
    return e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
  }

  private static byte[] hex(String text) {
    byte[] out = new byte[text.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  @Override
  public void close() {
    resetPy4j();
    worker.shutdownNow();
    watchdog.shutdownNow();
  }

  /**
   * Sockets with TCP_NODELAY (small Py4J commands are not held back by Nagle's algorithm), and
   * over TLS to {@code host} when {@code tls} is set (Py4J asks for connected sockets only).
   */
  static final class NoDelaySocketFactory extends SocketFactory {
    private final SocketFactory base = SocketFactory.getDefault();
    private final ControlPlaneTls tls;
    private final String host;
    private final int timeoutMs;

    NoDelaySocketFactory() {
      this(null, null, 0);
    }

    NoDelaySocketFactory(ControlPlaneTls tls, String host, int timeoutMs) {
      this.tls = tls;
      this.host = host;
      this.timeoutMs = timeoutMs;
    }

    private Socket connected(Socket s, int port) throws IOException {
      s.setTcpNoDelay(true);
      return tls == null ? s : tls.wrap(s, host, port, timeoutMs);
    }

    @Override
    public Socket createSocket() throws IOException {
      if (tls != null) {
        throw new IOException("TLS sockets to hedge serve are made connected");
      }
      Socket s = base.createSocket();
      s.setTcpNoDelay(true);
      return s;
    }

    @Override
    public Socket createSocket(String h, int p) throws IOException {
      return connected(base.createSocket(h, p), p);
    }

    @Override
    public Socket createSocket(String h, int p, InetAddress la, int lp) throws IOException {
      return connected(base.createSocket(h, p, la, lp), p);
    }

    @Override
    public Socket createSocket(InetAddress a, int p) throws IOException {
      return connected(base.createSocket(a, p), p);
    }

    @Override
    public Socket createSocket(InetAddress a, int p, InetAddress la, int lp) throws IOException {
      return connected(base.createSocket(a, p, la, lp), p);
    }
  }

  /**
   * Keeps the last line a server answered Py4J's token with, which Py4J logs (java.util.logging,
   * SEVERE) but leaves out of its exception; {@link #authRefusal} reads it.
   */
  static final class AuthAnswer extends java.util.logging.Handler {
    private static final String PREFIX =
        "Could not authenticate connection. Received this response: ";
    // a strong reference: java.util.logging holds its loggers weakly (with their handlers)
    private static final java.util.logging.Logger PY4J =
        java.util.logging.Logger.getLogger(py4j.NetworkUtil.class.getName());
    private static volatile String last;

    static {
      // Py4J turns its logging off (GatewayServer.turnLoggingOff): this logger keeps its SEVERE
      // records, for this handler only (the AM's own log line says what failed)
      PY4J.setLevel(java.util.logging.Level.SEVERE);
      PY4J.setUseParentHandlers(false);
      PY4J.addHandler(new AuthAnswer());
    }

    /** Loads the class: the handler is attached once per JVM. */
    static void install() {}

    static String last() {
      return last;
    }

    @Override
    public void publish(java.util.logging.LogRecord record) {
      String message = record.getMessage();
      if (message != null && message.startsWith(PREFIX)) {
        last = message.substring(PREFIX.length());
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
