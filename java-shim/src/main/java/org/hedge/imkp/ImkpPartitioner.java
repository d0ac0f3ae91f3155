package org.hedge.imkp;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.JobConf;

/**
 * ImKP partitioner for both MapReduce APIs ({@code mapreduce.job.partitioner.class} for the
 * new API, {@code mapred.partitioner.class} / {@code JobConf.setPartitionerClass} for the old).
 *
 * <p>Set {@code hedge.imkp.mapping} to the file {@code hedge imkp build} wrote: a local path, a
 * distributed-cache link name (ship it with {@code -files job.imkp}, then
 * {@code -D hedge.imkp.mapping=job.imkp}), or a path on any Hadoop FileSystem
 * ({@code hdfs://...}, or a scheme-less path on the default FileSystem). The mapping is read
 * once per task, when the framework configures the partitioner, and its R must equal the
 * job's reduce count. It never falls back to hash partitioning: a missing or invalid mapping
 * fails the task with a message saying what to fix, because a task routing by hash while
 * another routes by the mapping would send one key to two reducers.
 *
 * <p>Or let the control plane hand the mapping out: put the file in the directory `hedge serve`
 * serves ({@code [imkp] mappings} in {@code conf/hedge.ini}) and set
 * {@code hedge.imkp.mapping.fetch} to its plain file name ({@code -D
 * hedge.imkp.mapping.fetch=job.imkp}) instead of {@code hedge.imkp.mapping}. Each task then
 * fetches it once over Py4J when its partitioner is configured (never per record), reaching
 * the control plane through {@code hedge.controlplane.address} and
 * {@code hedge.controlplane.token.file}, the speculator's settings; the call is bounded by
 * {@code hedge.imkp.mapping.fetch.timeout.ms} (default 30000). The server validates the file
 * before sending it and the bytes are validated again here. An unreachable control plane, a
 * wrong token, a refused name or corrupt bytes fail the task with a message naming the
 * setting, the address and the fix: like a missing file, never a hash fallback. When both
 * keys are set, {@code hedge.imkp.mapping} (the file) is used.
 *
 * <p>A key's bytes are {@link Text#getBytes()} for {@code Text} keys, else the UTF-8 bytes of
 * {@code key.toString()}, exactly what {@code hedge imkp build} hashed.
 */
public class ImkpPartitioner<K, V> extends org.apache.hadoop.mapreduce.Partitioner<K, V>
    implements Configurable, org.apache.hadoop.mapred.Partitioner<K, V> {

  /** Configuration key naming the mapping file. */
  public static final String MAPPING = "hedge.imkp.mapping";
  /** Configuration key naming a mapping to fetch from the control plane (plain file name). */
  public static final String FETCH = "hedge.imkp.mapping.fetch";
  /** Bound on the fetch's connect and read, in milliseconds. */
  public static final String FETCH_TIMEOUT_MS = "hedge.imkp.mapping.fetch.timeout.ms";
  /** Largest mapping file accepted (a mapping holds G + K entries; this is far above). */
  static final long MAX_BYTES = 1L << 30;

  private Configuration conf;
  private ImkpMapping mapping;
  private int reducers; // mapping.reducers(), read once: getPartition checks it per record

  @Override
  public void setConf(Configuration conf) {
    if (conf == this.conf && mapping != null) {
      return;
    }
    this.conf = conf;
    try {
      mapping = load(conf);
      reducers = mapping.reducers();
    } catch (IOException e) {
      throw fail("ImkpPartitioner: " + e.getMessage(), e);
    }
    int reduces = conf.getInt("mapreduce.job.reduces", 1);
    if (reduces > 1 && reduces != mapping.reducers()) {
      throw fail(reducerMismatch(reduces), null);
    }
  }

  /**
   * The exception that fails the task. The message also goes to the task's stderr, so it is
   * seen whatever logging the cluster (or a LocalJobRunner client) has configured.
   */
  private static IllegalStateException fail(String message, Throwable cause) {
    System.err.println(message);
    return new IllegalStateException(message, cause);
  }

  private String reducerMismatch(int reduces) {
    return "ImkpPartitioner: the mapping " + source(conf) + " was built for "
        + mapping.reducers() + " reducers but the job has " + reduces + " reduce tasks; "
        + "rebuild it with 'hedge imkp build ... --reducers " + reduces + "' or run the job "
        + "with " + mapping.reducers() + " reducers";
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  @Override
  public void configure(JobConf job) {
    setConf(job);
  }

  @Override
  public int getPartition(K key, V value, int numPartitions) {
    if (numPartitions != reducers) {
      throw fail(reducerMismatch(numPartitions), null);
    }
    if (key instanceof Text) {
      Text text = (Text) key;
      return mapping.reducerOf(text.getBytes(), text.getLength());
    }
    byte[] bytes = String.valueOf(key).getBytes(StandardCharsets.UTF_8);
    return mapping.reducerOf(bytes, bytes.length);
  }

  /** The loaded mapping (for tests and tools). */
  public ImkpMapping mapping() {
    return mapping;
  }

  /** Where the mapping comes from, for messages: the file, else the name fetched. */
  private static String source(Configuration conf) {
    String file = conf.getTrimmed(MAPPING, "");
    return file.isEmpty() ? conf.getTrimmed(FETCH, "") + " (fetched from the control plane)"
        : file;
  }

  /**
   * Read and validate the mapping named by {@code hedge.imkp.mapping}, or, when that is unset,
   * fetch the one {@code hedge.imkp.mapping.fetch} names from the control plane.
   */
  public static ImkpMapping load(Configuration conf) throws IOException {
    String where = conf.getTrimmed(MAPPING, "");
    if (where.isEmpty()) {
      String name = conf.getTrimmed(FETCH, "");
      if (!name.isEmpty()) {
        return ImkpFetch.fetch(conf, name);
      }
      throw new IOException(MAPPING + " is not set: build a mapping with 'hedge imkp build "
          + "INPUT... --reducers R -o job.imkp' and pass -D " + MAPPING + "=job.imkp (a local "
          + "path, a -files link name, or an HDFS path), or put it in the control plane's "
          + "[imkp] mappings directory and pass -D " + FETCH + "=job.imkp");
    }
    File local = new File(where);
    if (!hasScheme(where) && local.isFile()) {
      return ImkpMapping.parse(Files.readAllBytes(local.toPath()), where);
    }
    Path path = new Path(where);
    FileSystem fs;
    FileStatus status;
    try {
      fs = path.getFileSystem(conf);
      status = fs.exists(path) ? fs.getFileStatus(path) : null;
    } catch (IOException e) {
      throw new IOException(MAPPING + "=" + where + ": cannot reach its file system ("
          + e.getMessage() + "); check the path or ship the file with -files", e);
    }
    if (status == null || !status.isFile()) {
      throw new IOException(MAPPING + "=" + where + ": mapping file not found (not a local "
          + "file or distributed-cache link in " + new File(".").getAbsoluteFile().getParent()
          + ", not on " + fs.getUri() + "); build it with 'hedge imkp build ... -o " + where
          + "' and ship it with -files or give its HDFS path");
    }
    if (status.getLen() > MAX_BYTES) {
      throw new IOException(MAPPING + "=" + where + ": " + status.getLen()
          + " bytes is too large for a mapping file; check the path");
    }
    byte[] data = new byte[(int) status.getLen()];
    InputStream in = fs.open(path);
    try {
      IOUtils.readFully(in, data, 0, data.length);
    } finally {
      in.close();
    }
    return ImkpMapping.parse(data, where);
  }

  private static boolean hasScheme(String where) {
    try {
      return new URI(where).getScheme() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }
}
