// Tiny XML writer for S3 responses (escaping done here, once).
#pragma once

#include <string>
#include <string_view>

namespace tablemere::api::s3 {

std::string XmlEscape(std::string_view text);

class XmlWriter {
 public:
  XmlWriter() { out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"; }
  // Opens <name> (with the S3 namespace when `with_ns`).
  XmlWriter& Open(std::string_view name, bool with_ns = false);
  XmlWriter& Close(std::string_view name);
  // <name>escaped text</name>
  XmlWriter& Element(std::string_view name, std::string_view text);
  // Appends already well-formed XML (elements with attributes, which this writer does
  // not otherwise produce). Callers escape any text in it with XmlEscape.
  XmlWriter& Raw(std::string_view xml) {
    out_ += xml;
    return *this;
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace tablemere::api::s3
