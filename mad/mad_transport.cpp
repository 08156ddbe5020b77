#include "mad/mad_transport.h"

#include <endian.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ibfx {

namespace {
std::uint8_t* mut(const MadBytes& m) { return const_cast<std::uint8_t*>(m.data()); }
constexpr int kQkeyQp1 = 0x80010000;  // IBA 13.4.2: well-known GSI Q_Key
}  // namespace

std::uint64_t mad_tid(const MadBytes& mad) { return mad_get_field64(mut(mad), 0, IB_MAD_TRID_F); }
std::uint16_t mad_attr_id(const MadBytes& mad) {
  return static_cast<std::uint16_t>(mad_get_field(mut(mad), 0, IB_MAD_ATTRID_F));
}
std::uint16_t mad_status(const MadBytes& mad) {
  return static_cast<std::uint16_t>(mad_get_field(mut(mad), 0, IB_MAD_STATUS_F));
}
std::uint8_t mad_method(const MadBytes& mad) {
  return static_cast<std::uint8_t>(mad_get_field(mut(mad), 0, IB_MAD_METHOD_F));
}

void build_pma_mad(MadBytes& mad, std::uint8_t method, std::uint16_t attr_id,
                   std::uint32_t attr_mod, std::uint64_t tid, const PmaData& data) {
  mad.fill(0);
  mad_set_field(mad.data(), 0, IB_MAD_BASEVER_F, 1);
  mad_set_field(mad.data(), 0, IB_MAD_MGMTCLASS_F, IB_PERFORMANCE_CLASS);
  mad_set_field(mad.data(), 0, IB_MAD_CLASSVER_F, 1);
  mad_set_field(mad.data(), 0, IB_MAD_METHOD_F, method);
  mad_set_field64(mad.data(), 0, IB_MAD_TRID_F, tid);
  mad_set_field(mad.data(), 0, IB_MAD_ATTRID_F, attr_id);
  mad_set_field(mad.data(), 0, IB_MAD_ATTRMOD_F, attr_mod);
  std::memcpy(mad.data() + kPmaDataOffset, data.data(), data.size());
}

void build_smp_mad(MadBytes& mad, std::uint8_t method, std::uint16_t attr_id,
                   std::uint32_t attr_mod, std::uint64_t tid) {
  build_pma_mad(mad, method, attr_id, attr_mod, tid, PmaData{});
  mad_set_field(mad.data(), 0, IB_MAD_MGMTCLASS_F, IB_SMI_CLASS);
}

std::uint8_t mad_mgmt_class(const MadBytes& mad) {
  return static_cast<std::uint8_t>(mad_get_field(mut(mad), 0, IB_MAD_MGMTCLASS_F));
}

PmaData pma_data(const MadBytes& mad) {
  PmaData d;
  std::memcpy(d.data(), mad.data() + kPmaDataOffset, d.size());
  return d;
}

UmadTransport::UmadTransport(const std::string& ca_name, int ca_port) {
  if (umad_init() < 0) throw std::runtime_error("umad_init failed: is ib_umad loaded?");
  const char* ca = ca_name.empty() ? nullptr : ca_name.c_str();
  port_id_ = umad_open_port(ca, ca_port);
  if (port_id_ < 0) {
    throw std::runtime_error("cannot open umad port " + (ca_name.empty() ? "(default)" : ca_name) +
                             ":" + std::to_string(ca_port) + ": " + std::strerror(-port_id_));
  }
  umad_port_t port{};
  if (umad_get_port(ca, ca_port, &port) == 0) {
    ca_name_ = port.ca_name;
    ca_port_ = port.portnum;
    local_.port_guid = be64toh(port.port_guid);
    local_.base_lid = static_cast<std::uint16_t>(port.base_lid);
    local_.lmc = static_cast<std::uint8_t>(port.lmc);
    local_.sm_lid = static_cast<std::uint16_t>(port.sm_lid);
    umad_release_port(&port);
    umad_ca_t local_ca{};
    if (umad_get_ca(ca_name_.c_str(), &local_ca) == 0) {
      local_.node_guid = be64toh(local_ca.node_guid);
      umad_release_ca(&local_ca);
    }
  } else {
    ca_name_ = ca_name;
    ca_port_ = ca_port;
  }
  agent_id_ = umad_register(port_id_, IB_PERFORMANCE_CLASS, 1, 0, nullptr);
  if (agent_id_ < 0) {
    umad_close_port(port_id_);
    throw std::runtime_error("cannot register a PMA agent on " + ca_name_ + ": " +
                             std::strerror(-agent_id_));
  }
  // The sweep's LID check sends LID-routed NodeInfo SMPs, which go through
  // QP0. A kernel or device that keeps QP0 from us (some virtual functions,
  // an SMP firewall) refuses the registration: the PMA sweep works without
  // it, only the check is off, and the worker tells the daemon why.
  // Discovery registers its own class 0x01 agent in another process
  // (discovery/discovery_process.h): under umad2sim two in one process
  // would share one agent slot per class.
  errno = 0;
  smp_agent_id_ = umad_register(port_id_, IB_SMI_CLASS, 1, 0, nullptr);
  if (smp_agent_id_ < 0) {
    // libibumad returns -EPERM for any refusal; errno has the ioctl's reason.
    smp_error_ = "cannot register a Subnet Management agent: " +
                 std::string(std::strerror(errno != 0 ? errno : -smp_agent_id_));
  }
  send_umad_ = umad_alloc(1, umad_size() + kMadSize);
  recv_umad_ = umad_alloc(1, umad_size() + kMadSize);
  if (send_umad_ == nullptr || recv_umad_ == nullptr) {
    if (send_umad_ != nullptr) umad_free(send_umad_);
    if (recv_umad_ != nullptr) umad_free(recv_umad_);
    if (smp_agent_id_ >= 0) umad_unregister(port_id_, smp_agent_id_);
    umad_unregister(port_id_, agent_id_);
    umad_close_port(port_id_);
    throw std::runtime_error("out of memory allocating a umad buffer");
  }
}

UmadTransport::~UmadTransport() {
  if (send_umad_ != nullptr) umad_free(send_umad_);
  if (recv_umad_ != nullptr) umad_free(recv_umad_);
  if (smp_agent_id_ >= 0) umad_unregister(port_id_, smp_agent_id_);
  if (agent_id_ >= 0) umad_unregister(port_id_, agent_id_);
  if (port_id_ >= 0) umad_close_port(port_id_);
}

bool UmadTransport::send(std::uint16_t lid, const MadBytes& mad,
                         std::chrono::milliseconds timeout) {
  const bool smp = mad_mgmt_class(mad) == IB_SMI_CLASS;
  if (smp && smp_agent_id_ < 0) return false;
  std::memcpy(umad_get_mad(send_umad_), mad.data(), kMadSize);
  // SMPs go to QP0 (Q_Key 0), everything else to the GSI QP1.
  umad_set_addr(send_umad_, lid, smp ? 0 : 1, 0, smp ? 0 : kQkeyQp1);
  // No kernel retries: the engine retries itself so that every attempt is
  // counted and per-node limits hold.
  return umad_send(port_id_, smp ? smp_agent_id_ : agent_id_, send_umad_,
                   static_cast<int>(kMadSize), static_cast<int>(timeout.count()), 0) == 0;
}

Received UmadTransport::receive(std::chrono::milliseconds wait) {
  Received r;
  int length = static_cast<int>(kMadSize);
  const int rc = umad_recv(port_id_, recv_umad_, &length, static_cast<int>(wait.count()));
  if (rc < 0) return r;  // -ETIMEDOUT (nothing arrived) or a transient error
  std::memcpy(r.mad.data(), umad_get_mad(recv_umad_), kMadSize);
  // A non-zero umad status means the kernel timed our request out (or could
  // not send it); the buffer then holds the request we sent.
  r.kind = umad_status(recv_umad_) != 0 ? Received::Kind::kSendFailed : Received::Kind::kResponse;
  return r;
}

SmpNodeInfo decode_smp_node_info(const PmaData& data) {
  static_assert(kAttrNodeInfo == IB_ATTR_NODE_INFO);
  // libibmad's field accessors take a mutable pointer even to read.
  auto* info = const_cast<std::uint8_t*>(data.data());
  SmpNodeInfo out;
  out.node_guid = mad_get_field64(info, 0, IB_NODE_GUID_F);
  out.local_port = static_cast<std::uint8_t>(mad_get_field(info, 0, IB_NODE_LOCAL_PORT_F));
  return out;
}

}  // namespace ibfx
