package tributary.compat;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.segment.analytics.Analytics;
import com.segment.analytics.Callback;
import com.segment.analytics.Log;
import com.segment.analytics.internal.AnalyticsVersion;
import com.segment.analytics.messages.AliasMessage;
import com.segment.analytics.messages.GroupMessage;
import com.segment.analytics.messages.IdentifyMessage;
import com.segment.analytics.messages.Message;
import com.segment.analytics.messages.MessageBuilder;
import com.segment.analytics.messages.PageMessage;
import com.segment.analytics.messages.ScreenMessage;
import com.segment.analytics.messages.TrackMessage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okio.Buffer;

/**
 * Drives the real analytics-java (com.segment.analytics.java:analytics, from Maven Central)
 * for the compatibility suite: identify, track, page, screen, group and alias through one
 * client with its own batching, then flush and shutdown; prints the manifest (see
 * test/compat/manifest.ts) as JSON on stdout.
 *
 * Settings by environment, so the write key never shows in a process list: COMPAT_ENDPOINT
 * (the base URL; the library appends /v1/import/), COMPAT_WRITE_KEY, COMPAT_RUN_ID.
 */
public final class Driver {
  private static final String REDACTED_WRITE_KEY = "<write key>";

  private Driver() {}

  private static String requiredEnv(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println("compat driver: " + name + " is required");
      System.exit(2);
    }
    return value;
  }

  static String describeAuthorization(String value, String writeKey) {
    String[] parts = value.split(" ", 2);
    if (!parts[0].equalsIgnoreCase("basic")) return parts[0] + " <credentials>";
    String decoded;
    try {
      decoded = new String(Base64.getDecoder().decode(parts.length > 1 ? parts[1] : ""), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException notBase64) {
      return "Basic <other credentials>";
    }
    return decoded.equals(writeKey + ":") ? "Basic <write key>:<empty password>" : "Basic <other credentials>";
  }

  /** Every request the library sends and the answer, kept by an OkHttp interceptor on its client. */
  static final class Recorder implements Interceptor {
    private final String writeKey;
    final List<Map<String, Object>> requests = Collections.synchronizedList(new ArrayList<>());

    Recorder(String writeKey) {
      this.writeKey = writeKey;
    }

    @Override
    public Response intercept(Chain chain) throws IOException {
      Request request = chain.request();
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("path", request.url().encodedPath());
      Map<String, String> headers = new LinkedHashMap<>();
      for (String name : request.headers().names()) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.equals("content-length")) continue;
        String value = String.join(", ", request.headers(name));
        headers.put(lower, lower.equals("authorization") ? describeAuthorization(value, writeKey) : value);
      }
      // The body the interceptors further down (gzip) have not touched yet is plain JSON; if
      // it is already compressed, gunzip it.
      byte[] raw = new byte[0];
      if (request.body() != null) {
        Buffer buffer = new Buffer();
        request.body().writeTo(buffer);
        raw = buffer.readByteArray();
        if (request.body().contentType() != null) headers.putIfAbsent("content-type", request.body().contentType().toString());
      }
      entry.put("headers", headers);
      entry.put("body", redactWriteKey(JsonParser.parseString(new String(gunzipIfNeeded(raw), StandardCharsets.UTF_8))));
      try {
        Response response = chain.proceed(request);
        String answer = response.peekBody(64 * 1024).string();
        entry.put("status", response.code());
        entry.put("response", answer);
        requests.add(entry);
        return response;
      } catch (IOException error) {
        entry.put("error", error.toString());
        requests.add(entry);
        throw error;
      }
    }

    private static byte[] gunzipIfNeeded(byte[] raw) throws IOException {
      if (raw.length < 2 || (raw[0] & 0xff) != 0x1f || (raw[1] & 0xff) != 0x8b) return raw;
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(raw))) {
        return in.readAllBytes();
      }
    }

    private static JsonElement redactWriteKey(JsonElement body) {
      if (body.isJsonObject() && body.getAsJsonObject().has("writeKey")) {
        body.getAsJsonObject().addProperty("writeKey", REDACTED_WRITE_KEY);
      }
      return body;
    }
  }

  /** One planned call: what the manifest says was sent, and the builder that sends it. */
  record Planned(Map<String, Object> call, MessageBuilder<?, ?> builder) {}

  private static Map<String, Object> map(Object... pairs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) out.put((String) pairs[i], pairs[i + 1]);
    return out;
  }

  private static Map<String, Object> call(String type, Object... pairs) {
    Map<String, Object> out = map(pairs);
    out.put("type", type);
    return out;
  }

  public static void main(String[] args) throws Exception {
    String endpoint = requiredEnv("COMPAT_ENDPOINT");
    String writeKey = requiredEnv("COMPAT_WRITE_KEY");
    String runId = requiredEnv("COMPAT_RUN_ID");

    Recorder recorder = new Recorder(writeKey);
    // The recorder goes first among the application interceptors, before the library's own
    // (auth, user agent, gzip) add theirs: it sees the request as the library made it only
    // after they ran, so it is added as a network interceptor.
    OkHttpClient http =
        new OkHttpClient.Builder()
            .addNetworkInterceptor(recorder)
            .connectTimeout(10, TimeUnit.SECONDS)
            .readTimeout(10, TimeUnit.SECONDS)
            .writeTimeout(10, TimeUnit.SECONDS)
            .build();

    List<String> errors = Collections.synchronizedList(new ArrayList<>());
    List<String> ids = Collections.synchronizedList(new ArrayList<>());
    int callCount = 6;
    CountDownLatch settled = new CountDownLatch(callCount);

    Analytics analytics =
        Analytics.builder(writeKey)
            .endpoint(endpoint)
            .client(http)
            // Its own batching: three messages per request, so the six calls take two.
            .flushQueueSize(3)
            .flushInterval(1, TimeUnit.SECONDS)
            .retries(3)
            .messageInterceptor(
                message -> {
                  ids.add(message.messageId());
                  return message;
                })
            .callback(
                new Callback() {
                  @Override
                  public void success(Message message) {
                    settled.countDown();
                  }

                  @Override
                  public void failure(Message message, Throwable error) {
                    errors.add(message.type() + " " + message.messageId() + " failed: " + error);
                    settled.countDown();
                  }
                })
            .log(
                new Log() {
                  @Override
                  public void print(Level level, String format, Object... args) {
                    if (level == Level.ERROR) errors.add("analytics-java: " + String.format(format, args));
                  }

                  @Override
                  public void print(Level level, Throwable error, String format, Object... args) {
                    if (level == Level.ERROR) errors.add("analytics-java: " + String.format(format, args) + ": " + error);
                  }
                })
            .build();

    String user = "java-user-" + runId;
    String anon = "java-anon-" + runId;
    Date historic = Date.from(Instant.parse("2016-03-01T07:59:59.250Z"));

    Map<String, Object> traits =
        map("name", "Zoë Ångström", "city", "東京", "motto", "naïve café & <crème brûlée> 🚀",
            "plan", map("tier", "pro", "seats", 5, "addons", List.of("sso", "audit")), "vip", true, "score", 9.75);
    Map<String, Object> identifyContext = map("ip", "203.0.113.7", "locale", "nb-NO");
    Map<String, Object> trackProperties = map("revenue", 19.99, "currency", "EUR", "items", List.of(map("sku", "A-1", "qty", 2)));
    Map<String, Object> pageProperties = map("path", "/pricing", "title", "Pricing");
    Map<String, Object> screenProperties = map("variant", "dark");
    Map<String, Object> groupTraits = map("name", "Initech", "employees", 120);

    List<Planned> plan = new ArrayList<>();
    plan.add(new Planned(
        call("identify", "userId", user, "traits", traits, "context", identifyContext),
        IdentifyMessage.builder().userId(user).traits(traits).context(identifyContext)));
    plan.add(new Planned(
        call("track", "userId", user, "event", "Order Completed", "properties", trackProperties,
            "integrations", map("All", true, "Webhooks", true)),
        TrackMessage.builder("Order Completed").userId(user).properties(trackProperties)
            .enableIntegration("All", true).enableIntegration("Webhooks", true)));
    plan.add(new Planned(
        call("page", "anonymousId", anon, "name", "Pricing", "properties", pageProperties),
        PageMessage.builder("Pricing").anonymousId(anon).properties(pageProperties)));
    plan.add(new Planned(
        call("screen", "userId", user, "name", "Settings", "properties", screenProperties),
        ScreenMessage.builder("Settings").userId(user).properties(screenProperties)));
    plan.add(new Planned(
        call("group", "userId", user, "groupId", "java-group-" + runId, "traits", groupTraits, "timestamp", "<wire>"),
        GroupMessage.builder("java-group-" + runId).userId(user).traits(groupTraits).timestamp(historic)));
    plan.add(new Planned(
        call("alias", "userId", user, "previousId", anon),
        AliasMessage.builder(anon).userId(user)));
    if (plan.size() != callCount) throw new IllegalStateException("callCount out of date");

    List<Map<String, Object>> calls = new ArrayList<>();
    for (Planned planned : plan) {
      int before = ids.size();
      analytics.enqueue(planned.builder());
      if (ids.size() != before + 1) {
        errors.add(planned.call().get("type") + " call was not taken by the library");
        settled.countDown();
        continue;
      }
      planned.call().put("messageId", ids.get(before));
      calls.add(planned.call());
    }
    analytics.flush();
    boolean done = settled.await(60, TimeUnit.SECONDS);
    analytics.shutdown();
    if (!done) errors.add("the library did not report every message as sent or failed within 60 s");

    // The historical timestamp as the library put it on the wire (its own ISO-8601 form).
    for (Map<String, Object> planned : calls) {
      if (!"<wire>".equals(planned.get("timestamp"))) continue;
      planned.put("timestamp", wireTimestamp(recorder, (String) planned.get("messageId")));
    }

    // What the library says about itself; it puts the same in the batch's context.library.
    Map<String, Object> library = map("name", "analytics-java", "version", AnalyticsVersion.get());
    Map<String, Object> manifest = new LinkedHashMap<>();
    manifest.put("client", "analytics-java");
    manifest.put("library", library);
    manifest.put("calls", calls);
    manifest.put("requests", new ArrayList<>(recorder.requests));
    manifest.put("errors", new ArrayList<>(errors));
    Gson gson = new GsonBuilder().disableHtmlEscaping().serializeNulls().create();
    System.out.println(gson.toJson(manifest));
    System.exit(0);
  }

  private static String wireTimestamp(Recorder recorder, String messageId) {
    for (Map<String, Object> request : recorder.requests) {
      JsonObject body = ((JsonElement) request.get("body")).getAsJsonObject();
      for (JsonElement message : body.getAsJsonArray("batch")) {
        JsonObject object = message.getAsJsonObject();
        if (messageId.equals(object.get("messageId").getAsString()) && object.has("timestamp")) {
          return object.get("timestamp").getAsString();
        }
      }
    }
    return null;
  }
}
