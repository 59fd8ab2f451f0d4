#include "accounts/account_service.h"

namespace tablemere::accounts {

AccountService::AccountService(metastore::Metastore& meta, objectstore::RegisteredStore& objects,
                               const Clock& clock, Random& random, const IdentitySecrets& secrets,
                               PublicUrls urls, bool unverified_signup_allowed,
                               identity::SigningKeys* signing_keys)
    : meta_(meta),
      objects_(objects),
      clock_(clock),
      random_(random),
      secrets_(secrets),
      urls_(std::move(urls)),
      signup_(meta_, objects_, clock_, random_, audit_, access_, orgs_, api_keys_,
              unverified_signup_allowed),
      auth_(meta_, clock_, random_, audit_, orgs_, signup_, signing_keys, urls_.api) {}

}  // namespace tablemere::accounts
