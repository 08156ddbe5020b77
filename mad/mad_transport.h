// The boundary between the sweep and the fabric: send one MAD to a LID, get
// MADs back. UmadTransport is the real one (libibumad); tests provide fakes.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include "mad/pma.h"

namespace ibfx {

using MadBytes = std::array<std::uint8_t, kMadSize>;

struct Received {
  enum class Kind : std::uint8_t { kNothing, kResponse, kSendFailed };
  Kind kind = Kind::kNothing;
  MadBytes mad{};  // for kSendFailed: the request the kernel gave back
};

// The local port as the kernel describes it (umad_get_port(), sysfs: the
// SMA's PortInfo), for keeping optional MADs away from this management node
// and from the SM (sweep/sm_guard.h). Zero where unknown.
struct LocalPort {
  std::uint64_t node_guid = 0;  // of the local CA
  std::uint64_t port_guid = 0;
  std::uint16_t base_lid = 0;
  std::uint8_t lmc = 0;      // the port answers at base_lid .. base_lid + 2^lmc - 1
  std::uint16_t sm_lid = 0;  // PortInfo:MasterSMLID
  friend bool operator==(const LocalPort&, const LocalPort&) = default;
};

class MadTransport {
 public:
  virtual ~MadTransport() = default;
  // Queues a MAD for `lid` (GSI, QP1). `timeout` lets a kernel that tracks
  // responses time the request out itself. Returns false on a local error.
  virtual bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds timeout) = 0;
  // Waits up to `wait` for one incoming MAD.
  virtual Received receive(std::chrono::milliseconds wait) = 0;
  // Whether send() also takes LID-routed SMPs (Subnet Management class,
  // QP0), which the sweep uses to confirm who answers at a LID.
  virtual bool supports_smp() const { return false; }
};

// What the daemon needs to know about a transport that can die and be
// replaced (the MAD worker process): implemented by MadWorker, absent for
// in-process and fake transports.
class TransportHealth {
 public:
  virtual ~TransportHealth() = default;
  // A transport is there to send to.
  virtual bool up() const = 0;
  // Changes every time the transport is replaced: LIDs learnt through an
  // earlier one may be stale, so the fabric must be discovered again.
  virtual std::uint64_t generation() const = 0;
  // Replacements so far (not counting the first start).
  virtual std::uint64_t restarts() const = 0;
  // Called after every sweep with what it sent and what was answered; a
  // transport that keeps answering nothing is presumed wedged.
  virtual void after_sweep(std::uint64_t mads_sent, std::uint64_t mads_answered) = 0;
  // The local port the current transport sends from (zeros when unknown).
  virtual LocalPort local_port() const { return {}; }
};

// libibumad on a local HCA port, registered as a PMA (class 0x04) client
// and, where QP0 is accessible, as a Subnet Management (class 0x01) client.
class UmadTransport final : public MadTransport {
 public:
  // Throws std::runtime_error when the port cannot be opened (start-up only).
  UmadTransport(const std::string& ca_name, int ca_port);
  ~UmadTransport() override;
  UmadTransport(const UmadTransport&) = delete;
  UmadTransport& operator=(const UmadTransport&) = delete;

  bool send(std::uint16_t lid, const MadBytes& mad, std::chrono::milliseconds timeout) override;
  Received receive(std::chrono::milliseconds wait) override;
  bool supports_smp() const override { return smp_agent_id_ >= 0; }
  // Why supports_smp() is false; empty when it is true.
  const std::string& smp_error() const { return smp_error_; }

  const std::string& ca_name() const { return ca_name_; }
  int ca_port() const { return ca_port_; }
  // As the kernel saw it when the port was opened.
  const LocalPort& local_port() const { return local_; }

 private:
  LocalPort local_;
  int port_id_ = -1;
  int agent_id_ = -1;
  int smp_agent_id_ = -1;
  std::string smp_error_;
  std::string ca_name_;
  int ca_port_ = 0;
  // Separate buffers (umad header + MAD) for sending and receiving, so that
  // the MAD worker may send on one thread while it receives on another.
  void* send_umad_ = nullptr;
  void* recv_umad_ = nullptr;
};

// Header helpers shared by the engine and tests (IBA 13.4.3 common MAD header).
std::uint64_t mad_tid(const MadBytes& mad);
std::uint16_t mad_attr_id(const MadBytes& mad);
std::uint16_t mad_status(const MadBytes& mad);
std::uint8_t mad_method(const MadBytes& mad);
void build_pma_mad(MadBytes& mad, std::uint8_t method, std::uint16_t attr_id,
                   std::uint32_t attr_mod, std::uint64_t tid, const PmaData& data);
// A LID-routed SMP: the same header with class 0x01; its data area starts
// at the same offset (24-byte header, M_Key, 32 reserved bytes).
void build_smp_mad(MadBytes& mad, std::uint8_t method, std::uint16_t attr_id,
                   std::uint32_t attr_mod, std::uint64_t tid);
std::uint8_t mad_mgmt_class(const MadBytes& mad);
PmaData pma_data(const MadBytes& mad);

// SMP NodeInfo (IBA 14.2.5.3), which the sweep asks a LID to learn whose it
// is; decoded here so that libibmad's field tables stay in this layer.
inline constexpr std::uint16_t kAttrNodeInfo = 0x0011;
struct SmpNodeInfo {
  std::uint64_t node_guid = 0;
  std::uint8_t local_port = 0;  // the port the SMP arrived through
};
SmpNodeInfo decode_smp_node_info(const PmaData& data);

}  // namespace ibfx
