// Writes the mad_fuzz seed corpus: PMA responses laid out by libibmad's own
// field setters (the same tables a real agent's answer is read with), so the
// fuzzer starts from well-formed ClassPortInfo / PortCounters /
// PortCountersExtended MADs rather than having to discover the layout.
// Usage: make_mad_seeds <dir> (tools/fuzz does not run it; the output is
// committed under fuzz/corpus/mad/).
#include <infiniband/mad.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using Mad = std::array<std::uint8_t, 256>;
constexpr int kDataOffset = 64;  // PMA data area (IBA 16.1.1)

Mad response(int attr_id, std::uint64_t tid, int status) {
  Mad mad{};
  mad_set_field(mad.data(), 0, IB_MAD_BASEVER_F, 1);
  mad_set_field(mad.data(), 0, IB_MAD_MGMTCLASS_F, IB_PERFORMANCE_CLASS);
  mad_set_field(mad.data(), 0, IB_MAD_CLASSVER_F, 1);
  mad_set_field(mad.data(), 0, IB_MAD_METHOD_F, 0x81);  // GetResp
  mad_set_field(mad.data(), 0, IB_MAD_STATUS_F, static_cast<std::uint32_t>(status));
  mad_set_field64(mad.data(), 0, IB_MAD_TRID_F, tid);
  mad_set_field(mad.data(), 0, IB_MAD_ATTRID_F, static_cast<std::uint32_t>(attr_id));
  return mad;
}

std::uint8_t* data(Mad& mad) { return mad.data() + kDataOffset; }

bool write(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// Decoder mode: selector 0, the MAD, then the six capability bytes that
// FuzzedDataProvider takes from the end of the input.
std::vector<std::uint8_t> decoder_seed(const Mad& mad, std::uint16_t cap, std::uint32_t cap2) {
  std::vector<std::uint8_t> out{0x00};
  out.insert(out.end(), mad.begin(), mad.end());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(cap2 >> (8 * i)));
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<std::uint8_t>(cap >> (8 * i)));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = true;

  // ClassPortInfo of a switch with extended and additional extended counters.
  Mad cpi = response(0x0001, 1, 0);
  mad_set_field(data(cpi), 0, IB_CPI_BASEVER_F, 1);
  mad_set_field(data(cpi), 0, IB_CPI_CLASSVER_F, 1);
  mad_set_field(data(cpi), 0, IB_CPI_CAPMASK_F, (1u << 9) | (1u << 12) | (1u << 8));
  mad_set_field(data(cpi), 0, IB_CPI_CAPMASK2_F, 1u << 1);
  mad_set_field(data(cpi), 0, IB_CPI_RESP_TIME_VALUE_F, 18);
  ok &= write(dir + "/class_port_info", decoder_seed(cpi, 0, 0));

  // PortCounters with every field at its maximum (saturated counters).
  Mad pc = response(0x0012, 2, 0);
  const MAD_FIELDS narrow[] = {
      IB_PC_PORT_SELECT_F,    IB_PC_COUNTER_SELECT_F, IB_PC_ERR_SYM_F,
      IB_PC_LINK_RECOVERS_F,  IB_PC_LINK_DOWNED_F,    IB_PC_ERR_RCV_F,
      IB_PC_ERR_PHYSRCV_F,    IB_PC_ERR_SWITCH_REL_F, IB_PC_XMT_DISCARDS_F,
      IB_PC_ERR_XMTCONSTR_F,  IB_PC_ERR_RCVCONSTR_F,  IB_PC_COUNTER_SELECT2_F,
      IB_PC_ERR_LOCALINTEG_F, IB_PC_ERR_EXCESS_OVR_F, IB_PC_VL15_DROPPED_F,
      IB_PC_XMT_BYTES_F,      IB_PC_RCV_BYTES_F,      IB_PC_XMT_PKTS_F,
      IB_PC_RCV_PKTS_F,       IB_PC_XMT_WAIT_F,       IB_PC_QP1_DROP_F};
  for (MAD_FIELDS f : narrow) mad_set_field(data(pc), 0, f, 0xFFFFFFFFu);
  ok &= write(dir + "/port_counters_saturated", decoder_seed(pc, (1u << 12) | (1u << 15), 0));

  // PortCounters with small distinct values, PortXmitWait not advertised.
  Mad pc_small = response(0x0012, 3, 0);
  std::uint32_t v = 1;
  for (MAD_FIELDS f : narrow) mad_set_field(data(pc_small), 0, f, v++);
  ok &= write(dir + "/port_counters_small", decoder_seed(pc_small, 0, 0));

  // PortCountersExtended with 64-bit values including the additional
  // error counters (CapabilityMask2 bit 1).
  Mad ext = response(0x001D, 4, 0);
  const MAD_FIELDS extended[] = {
      IB_PC_EXT_XMT_BYTES_F,      IB_PC_EXT_RCV_BYTES_F,      IB_PC_EXT_XMT_PKTS_F,
      IB_PC_EXT_RCV_PKTS_F,       IB_PC_EXT_XMT_UPKTS_F,      IB_PC_EXT_RCV_UPKTS_F,
      IB_PC_EXT_XMT_MPKTS_F,      IB_PC_EXT_RCV_MPKTS_F,      IB_PC_EXT_ERR_SYM_F,
      IB_PC_EXT_LINK_RECOVERS_F,  IB_PC_EXT_LINK_DOWNED_F,    IB_PC_EXT_ERR_RCV_F,
      IB_PC_EXT_ERR_PHYSRCV_F,    IB_PC_EXT_ERR_SWITCH_REL_F, IB_PC_EXT_XMT_DISCARDS_F,
      IB_PC_EXT_ERR_XMTCONSTR_F,  IB_PC_EXT_ERR_RCVCONSTR_F,  IB_PC_EXT_ERR_LOCALINTEG_F,
      IB_PC_EXT_ERR_EXCESS_OVR_F, IB_PC_EXT_VL15_DROPPED_F,   IB_PC_EXT_XMT_WAIT_F,
      IB_PC_EXT_QP1_DROP_F};
  mad_set_field(data(ext), 0, IB_PC_EXT_PORT_SELECT_F, 7);
  std::uint64_t big = 0x0123456789ABCDEFull;
  for (MAD_FIELDS f : extended) mad_set_field64(data(ext), 0, f, big++);
  ok &= write(dir + "/port_counters_ext", decoder_seed(ext, (1u << 9) | (1u << 12), 1u << 1));

  // PortSamplesControl with a 4 ns tick (IBA 16.1.3.2).
  Mad psc = response(0x0010, 6, 0);
  mad_set_field(data(psc), 0, IB_PSC_TICK_F, 2);
  ok &= write(dir + "/port_samples_control", decoder_seed(psc, 0, 0));

  // An error answer (status 0x0C: unsupported attribute/method).
  Mad err = response(0x001D, 5, 0x0C);
  ok &= write(dir + "/status_unsupported", decoder_seed(err, 1u << 10, 0));

  // Engine mode: selector 1 and a short answer script. With little input
  // left the fake transport answers every request in order (the happy path);
  // the scripts below add stale, duplicate and failed answers.
  ok &= write(dir + "/engine_happy", {0x01});
  ok &= write(dir + "/engine_script",
              {0x01, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x05, 0x04, 0x01, 0x02, 0x03, 0x06, 0x01,
               0x00, 0x10, 0x20, 0x30, 0x08, 0x02, 0x03, 0x01, 0x04, 0x02, 0x01, 0x10, 0x03, 0x01});
  std::vector<std::uint8_t> raw{0x01};
  raw.insert(raw.end(), pc.begin(), pc.end());
  raw.insert(raw.end(), {0x06, 0x06, 0x03, 0x01, 0x00, 0x02, 0x08, 0x04, 0x10});
  ok &= write(dir + "/engine_raw_answer", raw);

  if (!ok) {
    std::perror(dir.c_str());
    return 1;
  }
  return 0;
}
