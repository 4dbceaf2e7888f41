package momo

import "payments/rails/provider"

func secret(s string) provider.Secret { return provider.NewSecret(s) }
