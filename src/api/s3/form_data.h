// A streaming reader of multipart/form-data bodies (RFC 7578), for S3's POST uploads:
// small fields are read whole, the file part streams without being buffered. Written here
// because no packaged C++ library parses form data over a pull stream; Beast has none.
#pragma once

#include <string>

#include "common/result.h"
#include "http/message.h"

namespace tablemere::api::s3 {

struct FormPart {
  std::string name;          // the form field's name, as sent
  std::string filename;      // set for a file part
  std::string content_type;  // the part's Content-Type, if given
};

// The boundary of a "multipart/form-data; boundary=…" Content-Type, or "" when it is not one.
std::string FormBoundary(const std::string& content_type);

class FormDataReader {
 public:
  FormDataReader(http::BodyReader& body, const std::string& boundary);
  // Moves to the next part (skipping what is left of the current one); false after the
  // last. Malformed framing is MalformedPOSTRequest.
  Result<bool> Next(FormPart* part);
  // Reads the current part's content; 0 at its end.
  Result<size_t> Read(char* out, size_t size);
  // The current part's whole content, failing past `limit` bytes.
  Result<std::string> ReadValue(size_t limit);

 private:
  Result<bool> Fill();  // false at the end of the body
  void Compact();

  http::BodyReader& body_;
  std::string delimiter_;  // "\r\n--" + boundary
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool started_ = false;
  bool in_part_ = false;
  bool finished_ = false;
};

}  // namespace tablemere::api::s3
