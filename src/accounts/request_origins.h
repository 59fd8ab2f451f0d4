// Where each request in flight came from, by request id. The control API notes a
// request's caller address while it serves the request, so every audit event the request
// records (they all carry its request id) gets the address without each use case passing
// it along. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace tablemere::accounts {

class RequestOrigins {
 public:
  // Notes `address` for `request_id` until the returned guard is destroyed.
  class Noted {
   public:
    Noted(RequestOrigins& origins, std::string request_id)
        : origins_(origins), request_id_(std::move(request_id)) {}
    ~Noted() { origins_.Forget(request_id_); }
    Noted(const Noted&) = delete;
    Noted& operator=(const Noted&) = delete;

   private:
    RequestOrigins& origins_;
    std::string request_id_;
  };

  [[nodiscard]] Noted Note(const std::string& request_id, const std::string& address) {
    std::lock_guard lock(mu_);
    if (!request_id.empty()) by_request_[request_id] = address;
    return Noted(*this, request_id);
  }
  // "" for a request not in flight (or noted without an address).
  std::string AddressOf(const std::string& request_id) const {
    std::lock_guard lock(mu_);
    auto it = by_request_.find(request_id);
    return it == by_request_.end() ? "" : it->second;
  }

 private:
  void Forget(const std::string& request_id) {
    std::lock_guard lock(mu_);
    by_request_.erase(request_id);
  }

  mutable std::mutex mu_;
  std::map<std::string, std::string> by_request_;
};

}  // namespace tablemere::accounts
