#include "api/s3/xml.h"

namespace tablemere::api::s3 {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

XmlWriter& XmlWriter::Open(std::string_view name, bool with_ns) {
  out_ += '<';
  out_ += name;
  if (with_ns) out_ += " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
  out_ += '>';
  return *this;
}

XmlWriter& XmlWriter::Close(std::string_view name) {
  out_ += "</";
  out_ += name;
  out_ += '>';
  return *this;
}

XmlWriter& XmlWriter::Element(std::string_view name, std::string_view text) {
  out_ += '<';
  out_ += name;
  out_ += '>';
  out_ += XmlEscape(text);
  out_ += "</";
  out_ += name;
  out_ += '>';
  return *this;
}

}  // namespace tablemere::api::s3
