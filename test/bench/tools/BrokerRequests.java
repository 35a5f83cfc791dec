// The broker's own count of the requests it served, by API, over an interval: the cross-check
// of `tributary_kafka_requests_total` (which the services count) used in ANALYSIS.md. Attaches
// to a running local broker's JVM (same user), starts its local JMX agent and reads
// kafka.network:type=RequestMetrics,name=RequestsPerSec (Count) and TotalTimeMs (Mean).
//
//   java --add-modules jdk.attach test/bench/tools/BrokerRequests.java <broker pid> <seconds>
//
// The local stack's broker pid: pgrep -f kafka-3.9.1 (deploy/local). Counts include the
// broker-internal requests (WriteTxnMarkers, AddPartitionsToTxn verifications).
import com.sun.tools.attach.VirtualMachine;
import javax.management.*;
import javax.management.remote.*;
import java.util.*;
public class BrokerRequests {
  public static void main(String[] a) throws Exception {
    VirtualMachine vm = VirtualMachine.attach(a[0]);
    String addr = vm.startLocalManagementAgent();
    MBeanServerConnection c = JMXConnectorFactory.connect(new JMXServiceURL(addr)).getMBeanServerConnection();
    int secs = Integer.parseInt(a[1]);
    Map<String, Long> before = snap(c); Map<String, Double> t0 = times(c);
    Thread.sleep(secs * 1000L);
    Map<String, Long> after = snap(c); Map<String, Double> t1 = times(c);
    List<String> keys = new ArrayList<>(after.keySet());
    keys.sort((x, y) -> Long.compare(after.get(y) - before.getOrDefault(y, 0L), after.get(x) - before.getOrDefault(x, 0L)));
    for (String k : keys) { long d = after.get(k) - before.getOrDefault(k, 0L); if (d > 0) System.out.printf("%-36s %8.1f/s  mean total %.2f ms%n", k, d / (double) secs, (t1.getOrDefault(k,0.0)-t0.getOrDefault(k,0.0))/d); }
  }
  static Map<String, Long> snap(MBeanServerConnection c) throws Exception {
    Map<String, Long> m = new HashMap<>();
    for (ObjectName n : c.queryNames(new ObjectName("kafka.network:type=RequestMetrics,name=RequestsPerSec,*"), null)) {
      String r = n.getKeyProperty("request"); String v = n.getKeyProperty("version");
      m.merge(r, ((Number) c.getAttribute(n, "Count")).longValue(), Long::sum);
    }
    return m;
  }
  static Map<String, Double> times(MBeanServerConnection c) throws Exception {
    Map<String, Double> m = new HashMap<>();
    for (ObjectName n : c.queryNames(new ObjectName("kafka.network:type=RequestMetrics,name=TotalTimeMs,*"), null)) {
      Object mean = c.getAttribute(n, "Mean"); Object count = c.getAttribute(n, "Count");
      m.merge(n.getKeyProperty("request"), ((Number) mean).doubleValue() * ((Number) count).longValue(), Double::sum);
    }
    return m;
  }
}
