#pragma once
// What an HTTP/2 lane (a Connection whose requests travel as streams) needs
// of the session that carries it. H2Session (h2_session.hpp) is the one
// implementation; connection.cpp sees only this.

namespace kubeload::loadgen {

class Connection;

class LaneSession {
 public:
  // Sends the lane's request on a stream, connecting first when needed.
  virtual void start(Connection& lane) = 0;
  // Ends the lane's request as a timeout.
  virtual void abandon(Connection& lane) = 0;
  // Closes the connection (the run is over; no lane is busy).
  virtual void close() noexcept = 0;
  virtual bool is_open() const noexcept = 0;

 protected:
  ~LaneSession() = default;
};

}  // namespace kubeload::loadgen
